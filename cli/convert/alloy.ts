import type { Attribute, Block, Statement } from '../../lib/config/ast.js';
import { tokenize } from '../../lib/config/lexer.js';
import { parseConfig } from '../../lib/config/parser.js';
import { componentDefinition } from '../../core/runtime/component.js';
import type { BlockSpec } from '../../lib/config/schema.js';
import { stageDefinition } from '../../core/stage.js';
import { STAGE_IMPORT_BLOCK } from '../../core/stage-modules.js';
import type { Conversion, ConvertOptions, ConvertWarning } from './conversion.js';
import { dottedNames, REFERENCE_NAMES, referenceNameAt, type DottedName } from './reference-names.js';

/** The reference's default prefix of `stage.metrics` metric names, written out with keepNames. */
export const REFERENCE_METRICS_PREFIX = 'loki_process_custom_';

const METRIC_BLOCKS = new Set(['metric.counter', 'metric.gauge', 'metric.histogram']);
const FILE_MATCH = 'local.file_match';

/** A replacement of the text between two offsets of the input. */
interface Edit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/**
 * Rewrites a config written for the reference agent into one for Rivulet, on the token level so
 * that everything it does not rewrite stays byte for byte, comments and layout included:
 *
 * - component and stage names that differ (REFERENCE_NAMES), in block names and in references
 *   (`loki.write.default.receiver` → `logs.write.default.receiver`);
 * - with keepNames, `prefix = "loki_process_custom_"` in every `stage.metrics` metric block that
 *   sets none, since Rivulet's default prefix differs from the reference's;
 * - a `local.file_match` block that only sets `path_targets` and is only read as `.targets` is
 *   removed and its `path_targets` expression written where it was read: logs.source.file expands
 *   `__path__` globs itself. Any other `local.file_match` is kept, with a warning.
 *
 * A component Rivulet does not have is kept as written, with a warning at its block. Throws the
 * parser's ConfigErrors when the text does not parse.
 */
export function convertAlloy(text: string, file: string, options: ConvertOptions): Conversion {
  const ast = parseConfig(text, file);
  const names = dottedNames(tokenize(text, file).tokens);
  const edits: Edit[] = [];
  const warnings: ConvertWarning[] = [];
  const warn = (pos: { line: number; col: number }, message: string) => warnings.push({ file, line: pos.line, col: pos.col, message });

  const inlined = inlineFileMatches(text, ast.body, names, edits, warn);
  for (const name of names) {
    const found = referenceNameAt(name.parts);
    if (!found) continue;
    edits.push({ start: name.start, end: name.idents[found.length - 1]!.end.offset, text: REFERENCE_NAMES[found.name]! });
  }
  // Custom components: `declare "x"` gives instances written `x "label"`, `import.file "m"` ones written `m.x "label"`.
  const moduleBlocks = ast.body.filter((s): s is Block => s.kind === 'block' && (s.name === 'declare' || s.name.startsWith('import.')));
  const declared = new Set(moduleBlocks.filter((b) => b.name === 'declare').map((b) => b.label));
  const imported = new Set(moduleBlocks.filter((b) => b.name !== 'declare').map((b) => b.label));
  for (const stmt of ast.body) {
    if (stmt.kind !== 'block' || stmt.name === STAGE_IMPORT_BLOCK || inlined.has(stmt)) continue;
    if (moduleBlocks.includes(stmt) || declared.has(stmt.name) || imported.has(stmt.name.split('.')[0])) continue;
    const name = REFERENCE_NAMES[stmt.name] ?? stmt.name;
    const def = stmt.name.startsWith('stage.') ? stageDefinition(name.slice('stage.'.length)) : componentDefinition(name);
    if (def) unsupportedSettings(stmt, def, name, warn);
    else if (stmt.name !== FILE_MATCH)
      warn(stmt.pos, `Rivulet has no ${stmt.name.startsWith('stage.') ? 'stage' : 'component'} ${stmt.name}; the block is left as written`);
  }
  if (options.keepNames) for (const stmt of ast.body) if (stmt.kind === 'block') addMetricPrefixes(text, stmt, edits);
  warnings.sort((a, b) => a.line - b.line || a.col - b.col);
  return { output: applyEdits(text, edits), warnings };
}

/**
 * Writes each removable `local.file_match` block's `path_targets` where its `targets` are read
 * and removes the block; returns the blocks removed.
 */
function inlineFileMatches(
  text: string,
  body: readonly Statement[],
  names: readonly DottedName[],
  edits: Edit[],
  warn: (pos: { line: number; col: number }, message: string) => void,
): Set<Block> {
  const removed = new Set<Block>();
  for (const block of body) {
    if (block.kind !== 'block' || block.name !== FILE_MATCH) continue;
    const pathTargets = block.body.find((s): s is Attribute => s.kind === 'attribute' && s.name === 'path_targets');
    const uses = names.filter((n) => n.parts[0] === 'local' && n.parts[1] === 'file_match' && n.parts[2] === block.label);
    const removable =
      pathTargets?.endPos !== undefined && block.body.length === 1 && uses.every((n) => n.parts.length === 4 && n.parts[3] === 'targets');
    if (!removable) {
      warn(
        block.pos,
        "Rivulet has no component local.file_match and this one cannot be folded into its readers (it sets more than path_targets, or is read other than as .targets); give its path_targets to logs.source.file's targets",
      );
      continue;
    }
    const targets = text.slice(pathTargets.value.pos.offset, pathTargets.endPos!.offset);
    for (const use of uses) edits.push({ start: use.start, end: use.end, text: targets });
    edits.push({ ...wholeLines(text, block.pos.offset, block.endPos.offset + 1), text: '' });
    removed.add(block);
  }
  return removed;
}

/**
 * The span of a block removed with the lines it stands on: from the start of its first line (when
 * only blanks precede it there) to past its last line's newline, and one blank line after it when
 * a blank line (or the file's start) is before it, so no double gap is left.
 */
function wholeLines(text: string, start: number, end: number): { start: number; end: number } {
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  if (/^[ \t]*$/.test(text.slice(lineStart, start))) start = lineStart;
  const rest = /^[ \t]*(?:\r?\n|$)/.exec(text.slice(end));
  if (rest) end += rest[0].length;
  const blankBefore = start === 0 || /\n[ \t]*\r?\n$/.test(text.slice(0, start));
  const blankAfter = /^[ \t]*\r?\n/.exec(text.slice(end));
  if (blankBefore && blankAfter) end += blankAfter[0].length;
  return { start, end };
}

/**
 * Warns at each attribute and nested block Rivulet's version of a block does not have (the
 * reference's `encoding` of its file source, say): left as written, validate reports them.
 */
function unsupportedSettings(
  block: Block,
  spec: BlockSpec,
  title: string,
  warn: (pos: { line: number; col: number }, message: string) => void,
): void {
  for (const stmt of block.body) {
    const name = REFERENCE_NAMES[stmt.name] ?? stmt.name;
    if (stmt.kind === 'attribute') {
      if (!Object.hasOwn(spec.fields, stmt.name)) warn(stmt.pos, `Rivulet's ${title} has no attribute ${stmt.name}; left as written`);
      continue;
    }
    const nested = spec.blocks?.[stmt.name];
    const stage = spec.stages && name.startsWith('stage.') ? stageDefinition(name.slice('stage.'.length)) : undefined;
    if (nested ?? stage) unsupportedSettings(stmt, (nested ?? stage)!, `${title} > ${name}`, warn);
    else warn(stmt.pos, `Rivulet's ${title} has no block ${stmt.name}; left as written`);
  }
}

/**
 * Adds `prefix = "loki_process_custom_"` to the metric blocks of every `stage.metrics` inside
 * that set none, and writes it in place of an empty one: both mean "the default", which differs.
 */
function addMetricPrefixes(text: string, block: Block, edits: Edit[]): void {
  for (const child of block.body) {
    if (child.kind !== 'block') continue;
    if (block.name === 'stage.metrics' && METRIC_BLOCKS.has(child.name)) {
      const prefix = child.body.find((s): s is Attribute => s.kind === 'attribute' && s.name === 'prefix');
      if (!prefix) edits.push(prefixInsertion(text, child));
      else if (prefix.value.kind === 'string' && prefix.value.value === '' && prefix.endPos)
        edits.push({ start: prefix.value.pos.offset, end: prefix.endPos.offset, text: JSON.stringify(REFERENCE_METRICS_PREFIX) });
    } else {
      addMetricPrefixes(text, child, edits);
    }
  }
}

/** Inserts the prefix attribute as the block's last line, lined up with the attribute above it. */
function prefixInsertion(text: string, block: Block): Edit {
  const attribute = (width: number) => `${'prefix'.padEnd(width)} = ${JSON.stringify(REFERENCE_METRICS_PREFIX)}`;
  const blockIndent = indentOfLine(text, block.pos.offset);
  const last = block.body.at(-1);
  const brace = block.endPos.offset;
  const indent = last ? indentOfLine(text, last.pos.offset) : blockIndent + (blockIndent.includes('\t') ? '\t' : '  ');
  const lastEnd = last ? endOf(last) : text.indexOf('{', block.pos.offset) + 1;
  let width = 0;
  if (last?.kind === 'attribute') {
    // `name        = "x"`: the `=` of the line above sets the width the new name is padded to.
    const beforeEquals = text.slice(last.pos.offset, text.indexOf('=', last.pos.offset + last.name.length));
    if (/^\S+ +$/.test(beforeEquals)) width = beforeEquals.length - 1;
  }
  if (text.slice(lastEnd, brace).includes('\n')) {
    const braceLineStart = text.lastIndexOf('\n', brace - 1) + 1;
    return { start: braceLineStart, end: braceLineStart, text: `${indent}${attribute(width)}\n` };
  }
  return { start: lastEnd, end: brace, text: `\n${indent}${attribute(width)}\n${blockIndent}` };
}

function endOf(stmt: Statement): number {
  return stmt.kind === 'attribute' ? (stmt.endPos?.offset ?? stmt.value.pos.offset) : stmt.endPos.offset + 1;
}

/** The blanks that start the line `offset` is on. */
function indentOfLine(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart, offset))![0];
}

function applyEdits(text: string, edits: readonly Edit[]): string {
  const sorted = [...edits].sort((a, b) => a.start - b.start || a.end - b.end);
  let out = '';
  let at = 0;
  for (const edit of sorted) {
    // An edit inside a removed block (a name in it) has nothing left to change.
    if (edit.start < at) continue;
    out += text.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return out + text.slice(at);
}
