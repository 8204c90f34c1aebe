/**
 * Decides whether a parsed RE2 pattern has a JavaScript translation that behaves identically.
 *
 * Both engines prefer alternatives and repetitions in the same (leftmost-first) order, so most
 * patterns translate. The differences that remain, each found by testing against RE2:
 * - a repetition whose body can match the empty string: JavaScript rejects an empty optional
 *   iteration, RE2 accepts it (`(a*)?` on "b" captures "" in RE2 and nothing in JavaScript;
 *   `(?:|a)?` on "a" matches "" in RE2 and "a" in JavaScript);
 * - capture groups inside a repetition that may skip them in a later iteration: JavaScript clears
 *   them at each iteration, RE2 keeps the last value (`(a|(b))+` on "ba" gives group 2 = "b" in
 *   RE2, undefined in JavaScript);
 * - `\C` matches one byte of UTF-8, which has no UTF-16 counterpart;
 * - a pattern with both multi-line (`(?m)^`) and whole-text (`\A`, plain `^`) anchors: JavaScript
 *   has one `m` flag for the whole pattern and no lookbehind-free way to write the other kind.
 */
import type { RegexNode } from './ast.js';

/** Why `root` has no exact JavaScript translation, or `null` when it has one. */
export function untranslatableReason(root: RegexNode): string | null {
  let lineAnchors = false;
  let textAnchors = false;
  let reason: string | null = null;
  const visit = (node: RegexNode): void => {
    if (reason !== null) return;
    switch (node.kind) {
      case 'anyByte':
        reason = '\\C matches single UTF-8 bytes';
        return;
      case 'assert':
        if (node.assertion === 'beginLine' || node.assertion === 'endLine') lineAnchors = true;
        if (node.assertion === 'beginText' || node.assertion === 'endText') textAnchors = true;
        return;
      case 'concat':
      case 'alternate':
        node.items.forEach(visit);
        return;
      case 'capture':
        visit(node.body);
        return;
      case 'repeat':
        if (node.max > node.min && canMatchEmpty(node.body)) {
          reason = 'a repeated subexpression can match the empty string';
          return;
        }
        if (node.max > 1 && !everyGroupAlwaysSet(node.body)) {
          reason = 'a capture group inside a repetition can be skipped by an iteration';
          return;
        }
        visit(node.body);
        return;
      default:
        return;
    }
  };
  visit(root);
  if (reason === null && lineAnchors && textAnchors) reason = 'multi-line and whole-text anchors are mixed';
  return reason;
}

/** Whether the pattern uses multi-line `^`/`$` (translated with JavaScript's `m` flag). */
export function usesLineAnchors(root: RegexNode): boolean {
  return some(root, (n) => n.kind === 'assert' && (n.assertion === 'beginLine' || n.assertion === 'endLine'));
}

export function canMatchEmpty(node: RegexNode): boolean {
  switch (node.kind) {
    case 'empty':
    case 'assert':
      return true;
    case 'chars':
    case 'engineChars':
    case 'anyByte':
      return false;
    case 'concat':
      return node.items.every(canMatchEmpty);
    case 'alternate':
      return node.items.some(canMatchEmpty);
    case 'capture':
      return canMatchEmpty(node.body);
    case 'repeat':
      return node.min === 0 || canMatchEmpty(node.body);
  }
}

export function containsCapture(node: RegexNode): boolean {
  return some(node, (n) => n.kind === 'capture');
}

function some(node: RegexNode, test: (n: RegexNode) => boolean): boolean {
  if (test(node)) return true;
  switch (node.kind) {
    case 'concat':
    case 'alternate':
      return node.items.some((n) => some(n, test));
    case 'capture':
    case 'repeat':
      return some(node.body, test);
    default:
      return false;
  }
}

function everyGroupAlwaysSet(body: RegexNode): boolean {
  const all = new Set<number>();
  collectGroups(body, all);
  const always = groupsAlwaysSet(body);
  return [...all].every((g) => always.has(g));
}

function collectGroups(node: RegexNode, out: Set<number>): void {
  if (node.kind === 'capture') out.add(node.index);
  if (node.kind === 'concat' || node.kind === 'alternate') node.items.forEach((n) => collectGroups(n, out));
  if (node.kind === 'capture' || node.kind === 'repeat') collectGroups(node.body, out);
}

/** Groups that take part in every successful match of `node`. */
function groupsAlwaysSet(node: RegexNode): Set<number> {
  switch (node.kind) {
    case 'capture':
      return new Set([node.index, ...groupsAlwaysSet(node.body)]);
    case 'concat':
      return new Set(node.items.flatMap((n) => [...groupsAlwaysSet(n)]));
    case 'alternate': {
      const [first, ...rest] = node.items.map(groupsAlwaysSet);
      return new Set([...first!].filter((g) => rest.every((s) => s.has(g))));
    }
    case 'repeat':
      return node.min >= 1 ? groupsAlwaysSet(node.body) : new Set();
    default:
      return new Set();
  }
}
