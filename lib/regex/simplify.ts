import type { RegexNode } from './ast.js';

/**
 * Rewrites that keep RE2's meaning exactly but let more patterns run on V8.
 *
 * `(E)?` (greedy) where E always has an empty match becomes `(E)`: RE2 tries E's matches before
 * skipping it, and E's empty match leads to the same continuation as the skip, so the skip can
 * never be chosen — the two forms match the same text with the same captures. JavaScript, on the
 * other hand, treats an empty iteration of an optional group as "not taken", so the optional form
 * would differ there (a group RE2 reports as "" would be undefined). Common in access-log
 * patterns such as `"(?P<agent>[^"]*)?"`.
 */
export function simplifyForV8(node: RegexNode): RegexNode {
  switch (node.kind) {
    case 'concat':
    case 'alternate':
      return { kind: node.kind, items: node.items.map(simplifyForV8) };
    case 'capture':
      return { ...node, body: simplifyForV8(node.body) };
    case 'repeat': {
      const body = simplifyForV8(node.body);
      if (node.min === 0 && node.max === 1 && node.greedy && alwaysMatchesEmpty(body)) return body;
      return { ...node, body };
    }
    default:
      return node;
  }
}

/** Whether the node can match the empty string at every position (no assertion on that path). */
function alwaysMatchesEmpty(node: RegexNode): boolean {
  switch (node.kind) {
    case 'empty':
      return true;
    case 'concat':
      return node.items.every(alwaysMatchesEmpty);
    case 'alternate':
      return node.items.some(alwaysMatchesEmpty);
    case 'capture':
      return alwaysMatchesEmpty(node.body);
    case 'repeat':
      return node.min === 0 || alwaysMatchesEmpty(node.body);
    default:
      return false;
  }
}
