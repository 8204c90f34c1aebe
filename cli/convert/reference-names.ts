import type { Statement } from '../../lib/config/ast.js';
import type { Token } from '../../lib/config/lexer.js';
import { parseConfig } from '../../lib/config/parser.js';

/**
 * The reference agent's names for what Rivulet calls differently, and the one table that both
 * `rivulet convert --from alloy` (which rewrites them) and `validate`/`process` (which point at
 * convert when a config still uses them) read.
 */
export const REFERENCE_NAMES: Readonly<Record<string, string>> = {
  'loki.process': 'logs.process',
  'loki.write': 'logs.write',
  'loki.echo': 'logs.echo',
  'loki.source.file': 'logs.source.file',
  'loki.source.api': 'logs.source.api',
  'pyroscope.receive_http': 'profiles.receive_http',
  'pyroscope.write': 'profiles.write',
  'stage.windowsevent': 'stage.hostevent',
};

/** One dotted name as written (`loki . write` too): its tokens, start offset and end offset. */
export interface DottedName {
  readonly parts: readonly string[];
  readonly start: number;
  readonly end: number;
  /** The tokens of the name's identifiers, in order. */
  readonly idents: readonly Token[];
}

/**
 * Every maximal `a.b.c` chain of identifiers in the token stream: block names and references
 * alike (a chain that follows a `.` is the tail of an expression, not a name of its own).
 */
export function dottedNames(tokens: readonly Token[]): DottedName[] {
  const names: DottedName[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]!.kind !== 'ident' || tokens[i - 1]?.kind === '.') continue;
    const idents = [tokens[i]!];
    while (tokens[i + 1]?.kind === '.' && tokens[i + 2]?.kind === 'ident') {
      idents.push(tokens[i + 2]!);
      i += 2;
    }
    names.push({ parts: idents.map((t) => t.text), start: idents[0]!.pos.offset, end: idents.at(-1)!.end.offset, idents });
  }
  return names;
}

/** The longest reference name that `parts` starts with, and how many parts it spans. */
export function referenceNameAt(parts: readonly string[]): { readonly name: string; readonly length: number } | undefined {
  for (let length = parts.length; length >= 2; length--) {
    const name = parts.slice(0, length).join('.');
    if (Object.hasOwn(REFERENCE_NAMES, name)) return { name, length };
  }
  return undefined;
}

/**
 * The first component or stage block named with a reference name, if any (a text that does not
 * parse has none). References alone do not count: their errors already suggest the Rivulet name.
 */
export function firstReferenceBlockName(text: string, file: string): string | undefined {
  let body: readonly Statement[];
  try {
    body = parseConfig(text, file).body;
  } catch {
    return undefined;
  }
  const search = (statements: readonly Statement[]): string | undefined => {
    for (const stmt of statements) {
      if (stmt.kind !== 'block') continue;
      if (Object.hasOwn(REFERENCE_NAMES, stmt.name)) return stmt.name;
      const inner = search(stmt.body);
      if (inner !== undefined) return inner;
    }
    return undefined;
  };
  return search(body);
}

/**
 * The one line `validate` and `process` add under their errors when the config still uses the
 * reference's names, or undefined when it does not.
 */
export function convertHint(text: string, file: string): string | undefined {
  const name = firstReferenceBlockName(text, file);
  if (name === undefined) return undefined;
  return `hint: ${name} is the reference agent's name for ${REFERENCE_NAMES[name]}; \`rivulet convert --from alloy ${file}\` rewrites a config's names\n`;
}
