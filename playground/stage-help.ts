import { formatGoDuration } from '../lib/go/duration.js';
import { typeName, type BlockSpec, type FieldSpec } from '../lib/config/schema.js';
import { stageDefinitions } from '../core/stage.js';
import { formatGoFloat } from '../lib/go/values.js';
import type { BlockHelp, FieldHelp } from './api.js';

/**
 * Completion and hover help for every registered stage, generated from the same field schemas
 * that decode configs, so the editor can never offer a field the decoder would reject.
 */
export function stageHelp(): BlockHelp[] {
  return stageDefinitions().map((def) => blockHelp(`stage.${def.name}`, def.doc, def));
}

/** Help for one block (a stage, a component or a nested block), its nested blocks recursively. */
export function blockHelp(name: string, doc: string, spec: BlockSpec, extra: { multiple?: boolean; required?: boolean } = {}): BlockHelp {
  return {
    name,
    doc,
    fields: Object.entries(spec.fields).map(([field, f]) => fieldHelp(field, f)),
    blocks: Object.entries(spec.blocks ?? {}).map(([block, nested]) =>
      blockHelp(block, nested.doc, nested, { multiple: nested.multiple ?? false, required: nested.required ?? false }),
    ),
    stages: spec.stages ?? false,
    ...extra,
  };
}

function fieldHelp(name: string, field: FieldSpec): FieldHelp {
  const help: FieldHelp = { name, type: typeName(field.kind), doc: field.doc, required: field.required ?? false };
  const shown = field.default === undefined ? undefined : configLiteral(field.default, field.kind.type === 'duration');
  return { ...help, ...(shown === undefined ? {} : { default: shown }), ...(field.oneOf ? { oneOf: [...field.oneOf] } : {}) };
}

/** A default value as it would be written in a config: `"3s"`, `128`, `true`, `["a"]`. */
export function configLiteral(value: unknown, duration = false): string | undefined {
  if (typeof value === 'bigint') return duration ? JSON.stringify(formatGoDuration(value)) : value.toString();
  if (typeof value === 'number') return formatGoFloat(value);
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => configLiteral(v) ?? 'null').join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return entries.length === 0
      ? '{}'
      : `{ ${entries.map(([k, v]) => `${JSON.stringify(k)} = ${configLiteral(v) ?? 'null'}`).join(', ')} }`;
  }
  return undefined;
}
