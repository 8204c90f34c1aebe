import { formatConfig } from '../../lib/config/format.js';
import { parseConfig } from '../../lib/config/parser.js';

/**
 * The config a conversion builds, as a small tree whose attribute values are already config
 * expressions, printed in the canonical form `rivulet fmt` gives.
 */
export interface ConfigBlock {
  readonly name: string;
  readonly label?: string;
  readonly body: readonly ConfigStatement[];
}

export type ConfigStatement =
  | { readonly kind: 'attribute'; readonly name: string; readonly value: string }
  | { readonly kind: 'block'; readonly block: ConfigBlock }
  | { readonly kind: 'blank' };

/** An attribute whose value is already a config expression. */
export const attribute = (name: string, value: string): ConfigStatement => ({ kind: 'attribute', name, value });
/** A nested block. */
export const nested = (block: ConfigBlock): ConfigStatement => ({ kind: 'block', block });
/** A blank line, between groups of statements. */
export const BLANK: ConfigStatement = { kind: 'blank' };

const IDENTIFIER = /^[\p{L}_][\p{L}\p{Nd}_]*$/u;
const KEYWORDS = new Set(['true', 'false', 'null']);

/** A string literal: JSON's escapes are the config language's. */
export function stringLiteral(text: string): string {
  return JSON.stringify(text);
}

/** An object literal of already written values: one field inline, more one to a line. */
export function objectLiteral(fields: ReadonlyArray<readonly [string, string]>): string {
  const written = fields.map(([key, value]) => `${IDENTIFIER.test(key) && !KEYWORDS.has(key) ? key : stringLiteral(key)} = ${value}`);
  if (written.length === 0) return '{}';
  if (written.length === 1) return `{ ${written[0]} }`;
  return `{\n${written.map((w) => `${w},\n`).join('')}}`;
}

/** A list literal of already written items, on one line. */
export function listLiteral(items: readonly string[]): string {
  return `[${items.join(', ')}]`;
}

/** The blocks as config text, a blank line between them, formatted as `rivulet fmt` would. */
export function configText(blocks: readonly ConfigBlock[], file: string): string {
  const text = blocks.map((b) => blockText(b)).join('\n');
  return formatConfig(parseConfig(text, file));
}

function blockText(block: ConfigBlock): string {
  const head = block.label === undefined ? block.name : `${block.name} ${stringLiteral(block.label)}`;
  if (block.body.length === 0) return `${head} { }\n`;
  const lines = block.body.map((s) =>
    s.kind === 'blank' ? '\n' : s.kind === 'attribute' ? `${s.name} = ${s.value}\n` : blockText(s.block),
  );
  return `${head} {\n${lines.join('')}}\n`;
}
