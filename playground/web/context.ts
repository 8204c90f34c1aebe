/**
 * Where the cursor is in a config, for completion and hover: the enclosing blocks, whether it is
 * inside an attribute's value, and whether a statement could start there. A small scanner over
 * the text before the cursor (strings and comments skipped); it never needs the text to parse.
 */
export interface EditContext {
  /** Enclosing block names, outermost first: `logs.process`, `stage.match`, `stage.json`. */
  readonly blocks: readonly string[];
  /** The attribute whose value the cursor is in (`expressions` after `expressions = {`). */
  readonly attribute?: string;
  /** Nothing but blanks and a partial name before the cursor on its statement. */
  readonly statementStart: boolean;
}

type Frame = { readonly kind: 'block'; readonly name: string } | { readonly kind: 'value' };

const IDENT_START = /[\p{L}_]/u;
const IDENT_PART = /[\p{L}\p{Nd}_.]/u;

export function contextAt(text: string, pos: number): EditContext {
  const frames: Frame[] = [];
  /** The statement so far in the current block body: a header name, its label, an attribute. */
  let header: string | undefined;
  let headerLabel = false;
  let attribute: string | undefined;
  let atStatementStart = true;
  const valueDepth = () => {
    let n = 0;
    for (let i = frames.length - 1; i >= 0 && frames[i]!.kind === 'value'; i--) n++;
    return n;
  };
  const endStatement = () => {
    header = undefined;
    headerLabel = false;
    attribute = undefined;
    atStatementStart = true;
  };

  let i = 0;
  while (i < pos) {
    const ch = text[i]!;
    if (ch === '\n') {
      if (valueDepth() === 0) endStatement();
      i++;
    } else if (ch === ' ' || ch === '\t' || ch === '\r') {
      i++;
    } else if (text.startsWith('//', i)) {
      while (i < pos && text[i] !== '\n') i++;
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? pos : end + 2;
    } else if (ch === '"' || ch === '`') {
      i = skipString(text, i, pos);
      if (header !== undefined && !headerLabel && attribute === undefined) headerLabel = true;
      else header = undefined;
      atStatementStart = false;
    } else if (IDENT_START.test(ch)) {
      let j = i + 1;
      while (j < pos && IDENT_PART.test(text[j]!)) j++;
      if (j === pos) break; // the word being typed
      if (atStatementStart && valueDepth() === 0) header = text.slice(i, j);
      else header = undefined;
      atStatementStart = false;
      i = j;
    } else if (ch === '=' && text[i + 1] !== '=' && valueDepth() === 0 && header !== undefined && !headerLabel) {
      attribute = header;
      header = undefined;
      i++;
    } else if (ch === '{') {
      if (header !== undefined && attribute === undefined) {
        frames.push({ kind: 'block', name: header });
        endStatement();
      } else {
        frames.push({ kind: 'value' });
      }
      i++;
    } else if (ch === '[' || ch === '(') {
      frames.push({ kind: 'value' });
      header = undefined;
      i++;
    } else if (ch === '}' || ch === ']' || ch === ')') {
      const frame = frames.pop();
      if (frame?.kind === 'block' || (frame === undefined && ch === '}')) endStatement();
      i++;
    } else {
      header = undefined;
      atStatementStart = false;
      i++;
    }
  }
  const blocks = frames.filter((f): f is Extract<Frame, { kind: 'block' }> => f.kind === 'block').map((f) => f.name);
  const innermostIsBlock = frames.length === 0 || frames[frames.length - 1]!.kind === 'block';
  return {
    blocks,
    ...(attribute !== undefined ? { attribute } : {}),
    statementStart: innermostIsBlock && atStatementStart && attribute === undefined,
  };
}

/** The index just past the string starting at `start` (or `limit` when it runs on). */
function skipString(text: string, start: number, limit: number): number {
  const quote = text[start];
  let i = start + 1;
  while (i < limit) {
    const ch = text[i]!;
    if (quote === '"' && ch === '\\') i += 2;
    else if (ch === quote) return i + 1;
    else if (quote === '"' && ch === '\n') return i;
    else i++;
  }
  return limit;
}

/** The name (dotted identifier) around `pos`, with its range. */
export function wordAt(text: string, pos: number): { from: number; to: number; word: string } | undefined {
  let from = pos;
  let to = pos;
  while (from > 0 && IDENT_PART.test(text[from - 1]!)) from--;
  while (to < text.length && IDENT_PART.test(text[to]!)) to++;
  if (from === to || !IDENT_START.test(text[from]!)) return undefined;
  return { from, to, word: text.slice(from, to) };
}

/** The UTF-16 offset of a 1-based `line` and `col` (col counted in code points, as config errors are). */
export function offsetOf(text: string, line: number, col: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf('\n', offset);
    if (nl < 0) return text.length;
    offset = nl + 1;
  }
  for (let c = 1; c < col && offset < text.length && text[offset] !== '\n'; c++) {
    offset += (text.codePointAt(offset) ?? 0) > 0xffff ? 2 : 1;
  }
  return offset;
}
