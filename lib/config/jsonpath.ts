/**
 * JSONPath for the config function `json_path(json_string, path)`: the reference runs Goessner's
 * JSONPath (through a Go library) over the decoded JSON and returns every match as a list. This is
 * that language's common subset, enough for what the reference documents and more:
 *
 * - a root `$` (or none: `.key`, `key.sub` and `[0]` start at the root), `@` in filters;
 * - children `.name`, `['name']`, `["name"]`, wildcards `.*` and `[*]`, recursive descent `..name`,
 *   `..*`, `..[0]`;
 * - indexes `[0]`, `[-1]`, unions `[0,2]`, `['a','b']`, slices `[start:end:step]`;
 * - filters `[?(@.name == "Department")]`: paths, strings, numbers, `true`, `false`, `null`,
 *   `==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`, `||`, `!`, parentheses; a path alone tests existence.
 *
 * Regex matches (`=~`) and script expressions are not supported: they are an error, not a
 * silent miss. Members of an object come in key order (the reference's map order is not defined).
 */

/** A JSON value as `JSON.parse` gives it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A path that does not parse: the message says what was found where (0-based offset). */
export class JsonPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPathError';
  }
}

/**
 * Every value `path` selects in `document`, in document order.
 *
 * @example jsonPath(JSON.parse('[{"name":"a","value":1},{"name":"b","value":2}]'), '[?(@.name == "b")].value') // [2]
 */
export function jsonPath(document: Json, path: string): Json[] {
  const parser = new PathParser(path);
  const steps = parser.path(true);
  parser.end();
  return select(steps, [document], document);
}

type Step =
  | { readonly kind: 'child'; readonly selectors: readonly Selector[] }
  | { readonly kind: 'descendants'; readonly selectors: readonly Selector[] };

type Selector =
  | { readonly kind: 'name'; readonly name: string }
  | { readonly kind: 'wildcard' }
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'slice'; readonly start?: number; readonly end?: number; readonly step?: number }
  | { readonly kind: 'filter'; readonly test: Filter };

type Filter =
  | { readonly kind: 'path'; readonly root: '$' | '@'; readonly steps: readonly Step[] }
  | { readonly kind: 'literal'; readonly value: Json }
  | { readonly kind: 'not'; readonly operand: Filter }
  | { readonly kind: 'logical'; readonly op: '&&' | '||'; readonly left: Filter; readonly right: Filter }
  | { readonly kind: 'compare'; readonly op: CompareOp; readonly left: Filter; readonly right: Filter };

type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=';

const NAME_CHAR = /[\p{L}\p{N}_\-$]/u;

class PathParser {
  private i = 0;

  constructor(private readonly text: string) {}

  /** Steps up to the end of the path (at the top) or up to what a filter expression does not take. */
  path(top: boolean): Step[] {
    const steps: Step[] = [];
    if (top) {
      this.skipSpace();
      if (this.peek() === '$') this.i++;
      else if (this.peek() !== undefined && NAME_CHAR.test(this.peek()!)) steps.push(this.childStep([this.name()]));
    }
    for (;;) {
      const c = this.peek();
      if (c === '.' && this.text[this.i + 1] === '.') {
        this.i += 2;
        if (this.peek() === '[') steps.push({ kind: 'descendants', selectors: this.bracket() });
        else steps.push({ kind: 'descendants', selectors: [this.dotSelector()] });
      } else if (c === '.') {
        this.i++;
        steps.push({ kind: 'child', selectors: [this.dotSelector()] });
      } else if (c === '[') {
        steps.push({ kind: 'child', selectors: this.bracket() });
      } else {
        return steps;
      }
    }
  }

  end(): void {
    this.skipSpace();
    if (this.i < this.text.length) throw this.unexpected();
  }

  private childStep(selectors: Selector[]): Step {
    return { kind: 'child', selectors };
  }

  private dotSelector(): Selector {
    if (this.peek() === '*') {
      this.i++;
      return { kind: 'wildcard' };
    }
    return this.name();
  }

  private name(): Selector {
    const start = this.i;
    while (this.peek() !== undefined && NAME_CHAR.test(this.peek()!)) this.i++;
    if (this.i === start) throw this.unexpected('a name');
    return { kind: 'name', name: this.text.slice(start, this.i) };
  }

  private bracket(): Selector[] {
    this.expect('[');
    const selectors: Selector[] = [];
    do {
      this.skipSpace();
      selectors.push(this.bracketSelector());
      this.skipSpace();
    } while (this.eat(','));
    this.expect(']');
    return selectors;
  }

  private bracketSelector(): Selector {
    const c = this.peek();
    if (c === '*') {
      this.i++;
      return { kind: 'wildcard' };
    }
    if (c === "'" || c === '"') return { kind: 'name', name: this.string() };
    if (c === '?') {
      this.i++;
      this.skipSpace();
      if (this.peek() !== '(') return { kind: 'filter', test: this.or() };
      this.i++;
      const test = this.or();
      this.skipSpace();
      this.expect(')');
      return { kind: 'filter', test };
    }
    const start = this.optionalInteger();
    this.skipSpace();
    if (!this.eat(':')) {
      if (start === undefined) throw this.unexpected('an index, a name, "*" or a filter');
      return { kind: 'index', index: start };
    }
    this.skipSpace();
    const end = this.optionalInteger();
    this.skipSpace();
    let step: number | undefined;
    if (this.eat(':')) {
      this.skipSpace();
      step = this.optionalInteger();
    }
    return { kind: 'slice', start, end, step };
  }

  private or(): Filter {
    let left = this.and();
    while (this.eatOperator('||')) left = { kind: 'logical', op: '||', left, right: this.and() };
    return left;
  }

  private and(): Filter {
    let left = this.comparison();
    while (this.eatOperator('&&')) left = { kind: 'logical', op: '&&', left, right: this.comparison() };
    return left;
  }

  private comparison(): Filter {
    const left = this.operand();
    this.skipSpace();
    for (const op of ['==', '!=', '<=', '>=', '<', '>'] as const) {
      if (this.text.startsWith(op, this.i)) {
        this.i += op.length;
        return { kind: 'compare', op, left, right: this.operand() };
      }
    }
    if (this.text.startsWith('=~', this.i)) throw new JsonPathError(`regular expression matches (=~) are not supported, at ${this.i}`);
    return left;
  }

  private operand(): Filter {
    this.skipSpace();
    const c = this.peek();
    if (c === '!' && this.text[this.i + 1] !== '=') {
      this.i++;
      return { kind: 'not', operand: this.operand() };
    }
    if (c === '(') {
      this.i++;
      const inner = this.or();
      this.skipSpace();
      this.expect(')');
      return inner;
    }
    if (c === '@' || c === '$') {
      this.i++;
      return { kind: 'path', root: c, steps: this.path(false) };
    }
    if (c === "'" || c === '"') return { kind: 'literal', value: this.string() };
    for (const [word, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (this.text.startsWith(word, this.i) && !NAME_CHAR.test(this.text[this.i + word.length] ?? '')) {
        this.i += word.length;
        return { kind: 'literal', value };
      }
    }
    const number = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/.exec(this.text.slice(this.i));
    if (number) {
      this.i += number[0].length;
      return { kind: 'literal', value: Number(number[0]) };
    }
    throw this.unexpected('a path, a string, a number, true, false or null');
  }

  private string(): string {
    const quote = this.peek()!;
    const start = this.i;
    this.i++;
    let out = '';
    for (;;) {
      const c = this.peek();
      if (c === undefined) throw new JsonPathError(`unterminated string starting at ${start}`);
      this.i++;
      if (c === quote) return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const escaped = this.peek();
      this.i++;
      const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', '/': '/', '\\': '\\', "'": "'", '"': '"' };
      if (escaped !== undefined && simple[escaped] !== undefined) out += simple[escaped];
      else if (escaped === 'u' && /^[0-9a-fA-F]{4}$/.test(this.text.slice(this.i, this.i + 4))) {
        out += String.fromCharCode(Number.parseInt(this.text.slice(this.i, this.i + 4), 16));
        this.i += 4;
      } else throw new JsonPathError(`invalid escape in a string at ${this.i - 2}`);
    }
  }

  private optionalInteger(): number | undefined {
    const m = /^-?\d+/.exec(this.text.slice(this.i));
    if (!m) return undefined;
    this.i += m[0].length;
    return Number(m[0]);
  }

  private eatOperator(op: string): boolean {
    this.skipSpace();
    if (!this.text.startsWith(op, this.i)) return false;
    this.i += op.length;
    return true;
  }

  private eat(c: string): boolean {
    if (this.peek() !== c) return false;
    this.i++;
    return true;
  }

  private expect(c: string): void {
    if (!this.eat(c)) throw this.unexpected(JSON.stringify(c));
  }

  private peek(): string | undefined {
    return this.text[this.i];
  }

  private skipSpace(): void {
    while (this.peek() === ' ' || this.peek() === '\t' || this.peek() === '\n' || this.peek() === '\r') this.i++;
  }

  private unexpected(expected?: string): JsonPathError {
    const found = this.i < this.text.length ? JSON.stringify(this.text[this.i]) : 'the end';
    return new JsonPathError(`unexpected ${found} at ${this.i}${expected ? `, expected ${expected}` : ''}`);
  }
}

function select(steps: readonly Step[], start: readonly Json[], root: Json): Json[] {
  let nodes = [...start];
  for (const step of steps) {
    const next: Json[] = [];
    for (const node of nodes) {
      const targets = step.kind === 'child' ? [node] : selfAndDescendants(node);
      for (const target of targets) for (const selector of step.selectors) applySelector(selector, target, root, next);
    }
    nodes = next;
  }
  return nodes;
}

function applySelector(selector: Selector, node: Json, root: Json, out: Json[]): void {
  switch (selector.kind) {
    case 'name':
      if (isObject(node) && Object.hasOwn(node, selector.name)) out.push(node[selector.name]!);
      return;
    case 'wildcard':
      out.push(...members(node));
      return;
    case 'index': {
      if (!Array.isArray(node)) return;
      const i = selector.index < 0 ? node.length + selector.index : selector.index;
      if (i >= 0 && i < node.length) out.push(node[i]!);
      return;
    }
    case 'slice':
      if (Array.isArray(node)) out.push(...slice(node, selector));
      return;
    case 'filter':
      for (const member of members(node)) if (truthy(selector.test, member, root)) out.push(member);
      return;
  }
}

/** An array's items, or an object's values in key order; nothing for a scalar. */
function members(node: Json): Json[] {
  if (Array.isArray(node)) return node;
  if (isObject(node))
    return Object.keys(node)
      .sort()
      .map((k) => node[k]!);
  return [];
}

function selfAndDescendants(node: Json): Json[] {
  const out: Json[] = [node];
  for (const member of members(node)) out.push(...selfAndDescendants(member));
  return out;
}

function slice(items: readonly Json[], s: { start?: number; end?: number; step?: number }): Json[] {
  const step = s.step ?? 1;
  if (step === 0) return [];
  const n = items.length;
  const clamp = (v: number, low: number, high: number) => Math.min(Math.max(v < 0 ? v + n : v, low), high);
  const out: Json[] = [];
  if (step > 0) {
    for (let i = clamp(s.start ?? 0, 0, n); i < clamp(s.end ?? n, 0, n); i += step) out.push(items[i]!);
  } else {
    const start = s.start === undefined ? n - 1 : clamp(s.start, -1, n - 1);
    const end = s.end === undefined ? -1 : clamp(s.end, -1, n - 1);
    for (let i = start; i > end; i += step) out.push(items[i]!);
  }
  return out;
}

/** Whether a filter holds for `current` (`@`). */
function truthy(filter: Filter, current: Json, root: Json): boolean {
  switch (filter.kind) {
    case 'path':
      return operandValues(filter, current, root).length > 0;
    case 'literal':
      return filter.value !== null && filter.value !== false;
    case 'not':
      return !truthy(filter.operand, current, root);
    case 'logical':
      return filter.op === '&&'
        ? truthy(filter.left, current, root) && truthy(filter.right, current, root)
        : truthy(filter.left, current, root) || truthy(filter.right, current, root);
    case 'compare': {
      const left = operandValues(filter.left, current, root);
      const right = operandValues(filter.right, current, root);
      // A path that selects nothing compares as missing: only != holds.
      if (left.length === 0 || right.length === 0) return filter.op === '!=' && left.length + right.length > 0;
      return compare(filter.op, left[0]!, right[0]!);
    }
  }
}

function operandValues(filter: Filter, current: Json, root: Json): Json[] {
  if (filter.kind === 'path') return select(filter.steps, [filter.root === '@' ? current : root], root);
  if (filter.kind === 'literal') return [filter.value];
  return [truthy(filter, current, root)];
}

function compare(op: CompareOp, a: Json, b: Json): boolean {
  if (op === '==') return equal(a, b);
  if (op === '!=') return !equal(a, b);
  const ordered = (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string');
  if (!ordered) return false;
  switch (op) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
  }
}

function equal(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => equal(item, b[i]!));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && equal(a[k]!, b[k]!));
  }
  return false;
}

function isObject(v: Json): v is { [key: string]: Json } {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
