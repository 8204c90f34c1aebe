/**
 * The LogQL pattern language (Loki `pkg/logql/log/pattern`), used by `stage.pattern`:
 * `<name>` captures, `<_>` skips, everything else is literal text, matched in one
 * left-to-right pass without backtracking.
 */

/** An invalid pattern; `message` is Loki's own error text. */
export class PatternError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PatternError';
  }
}

type PatternNode = { readonly kind: 'capture'; readonly name: string } | { readonly kind: 'literal'; readonly text: string };

const UNNAMED = '_';
// Only ASCII letters count, like the reference lexer; anything else makes `<` plain text.
const CAPTURE = /<([A-Za-z_][A-Za-z0-9_]*)>/y;

/** A parsed pattern, ready to match lines. */
export class LogqlPattern {
  /** Named captures in pattern order (`<_>` excluded). */
  readonly names: string[];

  /** @internal use `parsePattern` */
  constructor(private readonly nodes: readonly PatternNode[]) {
    this.names = nodes.flatMap((n) => (n.kind === 'capture' && n.name !== UNNAMED ? [n.name] : []));
  }

  /**
   * The named captures found in `input`, in pattern order, or `null` when the input does not
   * match (it is empty, or does not start with the pattern's leading literal).
   *
   * Matching is lenient: each capture runs to the first occurrence of the literal after it; if
   * that literal is missing the capture takes the rest of the input and matching stops there,
   * so later captures are simply absent. Text after a trailing literal is ignored.
   *
   * @example parsePattern('<method> <path> <_>').match('GET /x HTTP/1.1') → [['method', 'GET'], ['path', '/x']]
   */
  match(input: string): Array<[name: string, value: string]> | null {
    if (input === '') return null;
    let nodes = this.nodes;
    let rest = input;
    const first = nodes[0];
    if (first?.kind === 'literal') {
      if (!rest.startsWith(first.text)) return null;
      rest = rest.slice(first.text.length);
      nodes = nodes.slice(1);
    }
    const captures: Array<[string, string]> = [];
    // From here the nodes alternate capture, literal, capture, … (validation guarantees it).
    for (let i = 0; i < nodes.length; i += 2) {
      const capture = nodes[i] as { kind: 'capture'; name: string };
      const literal = nodes[i + 1] as { kind: 'literal'; text: string } | undefined;
      const named = capture.name !== UNNAMED;
      if (literal === undefined) {
        if (named) captures.push([capture.name, rest]);
        return captures;
      }
      const at = rest.indexOf(literal.text);
      if (at < 0) {
        if (named) captures.push([capture.name, rest]);
        return captures;
      }
      if (named) captures.push([capture.name, rest.slice(0, at)]);
      rest = rest.slice(at + literal.text.length);
    }
    return captures;
  }
}

/**
 * Parses and validates a pattern: at least one named capture, no two captures side by side,
 * no duplicate names. A `<` that does not open a valid `<name>` is literal text.
 *
 * @throws PatternError e.g. `at least one capture is required`,
 *   `found consecutive capture '<a><b>': invalid expression`,
 *   `duplicate capture name (a): invalid expression`
 */
export function parsePattern(pattern: string): LogqlPattern {
  if (pattern === '') {
    // What the reference's yacc parser reports for an input without any token.
    throw new PatternError('parse error at line 1, col 1: syntax error: unexpected $end, expecting IDENTIFIER or LITERAL');
  }
  const nodes = tokenize(pattern);
  validate(nodes);
  return new LogqlPattern(nodes);
}

function tokenize(pattern: string): PatternNode[] {
  const nodes: PatternNode[] = [];
  let literal = '';
  let i = 0;
  while (i < pattern.length) {
    CAPTURE.lastIndex = i;
    const capture = pattern[i] === '<' ? CAPTURE.exec(pattern) : null;
    if (capture) {
      if (literal !== '') nodes.push({ kind: 'literal', text: literal });
      literal = '';
      nodes.push({ kind: 'capture', name: capture[1]! });
      i = CAPTURE.lastIndex;
    } else {
      literal += pattern[i];
      i++;
    }
  }
  if (literal !== '') nodes.push({ kind: 'literal', text: literal });
  return nodes;
}

function validate(nodes: readonly PatternNode[]): void {
  const names = nodes.flatMap((n) => (n.kind === 'capture' && n.name !== UNNAMED ? [n.name] : []));
  if (names.length === 0) throw new PatternError('at least one capture is required');
  for (let i = 0; i + 1 < nodes.length; i++) {
    const a = nodes[i]!;
    const b = nodes[i + 1]!;
    if (a.kind === 'capture' && b.kind === 'capture') {
      throw new PatternError(`found consecutive capture '<${a.name}><${b.name}>': invalid expression`);
    }
  }
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new PatternError(`duplicate capture name (${name}): invalid expression`);
    seen.add(name);
  }
}
