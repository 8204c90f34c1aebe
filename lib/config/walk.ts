import { quoteGoString } from '../go/gostring.js';
import type { Attribute, Block, Statement } from './ast.js';
import { isIdentifier } from './lexer.js';

/**
 * The name a block goes by in block paths and messages: `logs.process "default"`, `stage.json`.
 */
export function blockPathLabel(block: Block): string {
  if (block.label === undefined) return block.name;
  // Labels are identifiers when parsed; a hand-built one is quoted the way Go quotes strings.
  return `${block.name} ${isIdentifier(block.label) ? `"${block.label}"` : quoteGoString(block.label)}`;
}

/** The attributes written directly in a body, in order. */
export function attributesOf(body: readonly Statement[]): Attribute[] {
  return body.filter((stmt): stmt is Attribute => stmt.kind === 'attribute');
}

/** The blocks written directly in a body, in order; only those named `name` when given. */
export function blocksOf(body: readonly Statement[], name?: string): Block[] {
  return body.filter((stmt): stmt is Block => stmt.kind === 'block' && (name === undefined || stmt.name === name));
}
