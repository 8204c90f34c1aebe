import type { BlockHelp, FieldHelp } from '../api.js';

/**
 * Looks up registry help by editing context: the block the cursor is in, what may be written
 * there, and the field or stage a name refers to.
 */
export class HelpIndex {
  private readonly stages: ReadonlyMap<string, BlockHelp>;

  constructor(readonly stageList: readonly BlockHelp[]) {
    this.stages = new Map(stageList.map((s) => [s.name, s]));
  }

  stage(name: string): BlockHelp | undefined {
    return this.stages.get(name);
  }

  /**
   * The help of the innermost block in `blocks` (outermost first): a stage, a nested block of a
   * stage (`metric.counter`), or undefined for `logs.process` and the top level.
   */
  blockAt(blocks: readonly string[]): BlockHelp | undefined {
    let current: BlockHelp | undefined;
    for (const name of blocks) {
      const stage = this.stages.get(name);
      if (stage && (current === undefined || current.stages)) current = stage;
      else current = current?.blocks.find((b) => b.name === name);
    }
    return current;
  }

  /** Whether `stage.*` blocks may be written directly inside `blocks`. */
  acceptsStages(blocks: readonly string[]): boolean {
    if (blocks.length === 0) return true;
    if (blocks.length === 1 && blocks[0] === 'logs.process') return true;
    return this.blockAt(blocks)?.stages ?? false;
  }

  field(blocks: readonly string[], name: string): FieldHelp | undefined {
    return this.blockAt(blocks)?.fields.find((f) => f.name === name);
  }
}

/** A placeholder value for a field of this type, as snippet text. */
export function valueSnippet(field: FieldHelp): string {
  if (field.oneOf && field.oneOf.length > 0) return `"\${${field.oneOf[0]}}"`;
  if (field.type.startsWith('map(')) return '{ ${} }';
  if (field.type.startsWith('list(')) return '[${}]';
  switch (field.type) {
    case 'bool':
      return '${true}';
    case 'number':
    case 'int':
      return '${0}';
    case 'duration':
      return '"${1s}"';
    default:
      return '"${}"';
  }
}

/** The snippet of a new block with its required attributes and blocks filled in. */
export function blockSnippet(block: BlockHelp): string {
  const required = block.fields.filter((f) => f.required).map((f) => `\t${f.name} = ${valueSnippet(f)}`);
  const nested = block.blocks.filter((b) => b.required).map((b) => `\t${b.name} {\n\t}`);
  const body = [...required, ...nested];
  return `${block.name} {\n${body.length > 0 ? body.join('\n') : '\t${}'}\n}`;
}

/** Hover and completion text for a field: `string, required` / `duration, default "3s"` plus the doc. */
export function describeField(field: FieldHelp): string {
  const facts = [field.type, field.required ? 'required' : field.default !== undefined ? `default ${field.default}` : 'optional'];
  if (field.oneOf) facts.push(`one of ${field.oneOf.map((v) => JSON.stringify(v)).join(', ')}`);
  return `${facts.join(', ')}\n${field.doc}`;
}
