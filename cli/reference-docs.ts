/**
 * The reference pages under docs/reference, generated from the stage and component registries:
 * every field with its type, default, required flag, accepted values and doc text, every nested
 * block, and a valid example config. `scripts/gen-reference.ts` writes them; a test regenerates
 * them in memory to catch stale pages and runs every example.
 */
// Every built-in stage and component, registered before the registries are read.
import '../index.js';
import { type ComponentDefinition, componentDefinitions } from '../core/runtime/component.js';
import { type StageDefinition, stageDefinitions } from '../core/stage.js';
import { formatConfig } from '../lib/config/format.js';
import { parseConfig } from '../lib/config/parser.js';
import type { BlockHelp, FieldHelp } from '../playground/api.js';
import { blockHelp } from '../playground/stage-help.js';

/** Where the pages live, relative to the repository root. */
export const REFERENCE_DIR = 'docs/reference';

/** The command that rewrites the pages. */
export const REFERENCE_COMMAND = 'npm run gen:reference';

/** One page's example and how it is checked. */
export interface ReferenceExample {
  /** The page, relative to {@link REFERENCE_DIR}: `stages/json.md`. */
  readonly page: string;
  /** A stage list (what `rivulet process` reads) or a component graph (what `rivulet run` builds). */
  readonly kind: 'stage-list' | 'graph';
  readonly config: string;
}

/** The sink a generated example forwards to, by the receiver type it needs. */
const RECEIVER_SINKS: Readonly<Record<string, { readonly ref: string; readonly block: string }>> = {
  'logs.receiver': { ref: 'logs.echo.out.receiver', block: 'logs.echo "out" { }' },
  'profiles.receiver': { ref: 'profiles.echo.out.receiver', block: 'profiles.echo "out" { }' },
};

const GENERATED_NOTE = `<!-- Generated from the stage and component schemas by scripts/gen-reference.ts: do not edit; run \`${REFERENCE_COMMAND}\`. -->`;

/** Every example of the reference pages, in page order. */
export function referenceExamples(): ReferenceExample[] {
  return [
    ...stageDefinitions().map((def) => ({ page: stagePage(def.name), kind: 'stage-list' as const, config: stageExample(def) })),
    ...componentDefinitions().map((def) => ({ page: componentPage(def.name), kind: 'graph' as const, config: componentExample(def) })),
  ];
}

/** Every reference page: path relative to {@link REFERENCE_DIR} → its text. */
export function referencePages(): Map<string, string> {
  const pages = new Map<string, string>();
  const stages = stageDefinitions();
  const components = componentDefinitions();
  pages.set('README.md', indexPage(stages, components));
  for (const def of stages) pages.set(stagePage(def.name), stageDoc(def));
  for (const def of components) pages.set(componentPage(def.name), componentDoc(def));
  return pages;
}

function stagePage(name: string): string {
  return `stages/${name}.md`;
}

function componentPage(name: string): string {
  return `components/${name}.md`;
}

function indexPage(stages: readonly StageDefinition<any>[], components: readonly ComponentDefinition[]): string {
  const out = [
    GENERATED_NOTE,
    '',
    '# Reference',
    '',
    'Every component and every `logs.process` stage, with all of its attributes and nested blocks,',
    'generated from the same schemas that decode config files. Each page ends with an example that',
    'the test suite validates.',
    '',
    '## Components',
    '',
    '| component | exports | what it does |',
    '| --- | --- | --- |',
    ...components.map(
      (def) =>
        `| [\`${def.name}\`](${componentPage(def.name)}) | ${def.exportNames.map((e) => `\`${e}\``).join(', ') || '—'} | ${cell(firstSentence(def.doc))} |`,
    ),
    '',
    '## Stages',
    '',
    'Stages are `stage.*` blocks inside a [`logs.process`](components/logs.process.md) block, applied in order.',
    '',
    '| stage | what it does |',
    '| --- | --- |',
    ...stages.map((def) => `| [\`stage.${def.name}\`](${stagePage(def.name)}) | ${cell(firstSentence(def.doc))} |`),
    '',
  ];
  return out.join('\n');
}

function stageDoc(def: StageDefinition<any>): string {
  const help = blockHelp(`stage.${def.name}`, def.doc, def);
  return [
    GENERATED_NOTE,
    '',
    `# \`stage.${def.name}\``,
    '',
    def.doc,
    '',
    `A stage of a [\`logs.process\`](../components/logs.process.md) block. [All stages](../README.md#stages).`,
    '',
    ...blockSections(help, 'Arguments'),
    '## Example',
    '',
    'A stage list, as `rivulet process --config FILE` reads it; in a `logs.process` block the same stages come before `forward_to`.',
    '',
    '```alloy',
    stageExample(def).trimEnd(),
    '```',
    '',
  ].join('\n');
}

function componentDoc(def: ComponentDefinition): string {
  const help = blockHelp(def.name, def.doc, def);
  const exports =
    def.exportNames.length === 0
      ? ['This component exports nothing.']
      : [
          '| export | referenced as |',
          '| --- | --- |',
          ...def.exportNames.map((name) => `| \`${name}\` | \`${def.name}.LABEL.${name}\` |`),
        ];
  return [
    GENERATED_NOTE,
    '',
    `# \`${def.name}\``,
    '',
    def.doc,
    '',
    `Written as \`${def.name} "LABEL" { … }\`. [All components](../README.md#components).`,
    '',
    ...blockSections(help, 'Arguments'),
    '## Exports',
    '',
    ...exports,
    '',
    '## Example',
    '',
    '```alloy',
    componentExample(def).trimEnd(),
    '```',
    '',
  ].join('\n');
}

/** The block's fields table, then a section per nested block (recursively, titled by path). */
function blockSections(help: BlockHelp, title: string, path: readonly string[] = []): string[] {
  const out = [`## ${title}`, ''];
  if (path.length > 0) {
    out.push(help.doc, '');
    const facts = [help.required ? 'Required.' : 'Optional.', help.multiple ? 'May be given more than once.' : 'At most one.'];
    out.push(facts.join(' '), '');
  }
  if (help.fields.length === 0) out.push('No attributes.', '');
  else out.push(...fieldsTable(help.fields), '');
  if (help.blocks.length > 0) {
    out.push('Nested blocks:', '');
    for (const block of help.blocks) {
      const blockPath = [...path, block.name];
      out.push(
        `- [\`${block.name}\`](#${anchor(`block ${blockPath.join(' > ')}`)})${block.required ? ' (required)' : ''}${block.multiple ? ' (repeatable)' : ''}: ${firstSentence(block.doc)}`,
      );
    }
    out.push('');
  }
  if (help.stages) out.push('Also takes nested `stage.*` blocks, applied in order (see [all stages](../README.md#stages)).', '');
  for (const block of help.blocks) out.push(...blockSections(block, `Block ${[...path, block.name].join(' > ')}`, [...path, block.name]));
  return out;
}

function fieldsTable(fields: readonly FieldHelp[]): string[] {
  return [
    '| name | type | default | required | description |',
    '| --- | --- | --- | --- | --- |',
    ...fields.map((f) => {
      const allowed = f.oneOf ? ` One of ${f.oneOf.map((v) => `\`${JSON.stringify(v)}\``).join(', ')}.` : '';
      const shown = f.default === undefined ? '' : `\`${f.default}\``;
      return `| \`${f.name}\` | \`${f.type}\` | ${cell(shown)} | ${f.required ? 'yes' : 'no'} | ${cell(f.doc + allowed)} |`;
    }),
  ];
}

/** A GitHub-style heading anchor. */
function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

function firstSentence(doc: string): string {
  const flat = doc.replace(/\s*\n\s*/g, ' ').trim();
  const end = flat.search(/\.(\s|$)/);
  return end === -1 ? flat : flat.slice(0, end + 1);
}

/** The definition's own example, or a minimal stage block of its required fields. */
export function stageExample(def: StageDefinition<any>): string {
  if (def.example !== undefined) return canonical(def.example);
  const sinks = new Set<string>();
  return canonical(minimalBlock(`stage.${def.name}`, blockHelp(`stage.${def.name}`, def.doc, def), sinks));
}

/** The definition's own example, or a minimal block of its required fields plus what it forwards to. */
export function componentExample(def: ComponentDefinition): string {
  if (def.example !== undefined) return canonical(def.example);
  const sinks = new Set<string>();
  const main = minimalBlock(`${def.name} "default"`, blockHelp(def.name, def.doc, def), sinks);
  return canonical([main, ...sinks].join('\n\n'));
}

function canonical(config: string): string {
  return formatConfig(parseConfig(config, 'example.alloy'));
}

function minimalBlock(title: string, help: BlockHelp, sinks: Set<string>): string {
  const lines: string[] = [];
  for (const field of help.fields) if (field.required) lines.push(`${field.name} = ${exampleValue(field, sinks)}`);
  for (const block of help.blocks) if (block.required) lines.push(minimalBlock(block.name, block, sinks));
  if (lines.length === 0) return `${title} { }`;
  return `${title} {\n${lines.join('\n')}\n}`;
}

/** A value of the field's type; receiver lists point at an echo sink that the example then adds. */
function exampleValue(field: FieldHelp, sinks: Set<string>): string {
  if (field.oneOf && field.oneOf.length > 0) return JSON.stringify(field.oneOf[0]);
  return valueOfType(field.type, sinks);
}

function valueOfType(type: string, sinks: Set<string>): string {
  const inner = /^(list|map)\((.*)\)$/.exec(type);
  if (inner?.[1] === 'list') return `[${valueOfType(inner[2]!, sinks)}]`;
  if (inner?.[1] === 'map') return `{ example = ${valueOfType(inner[2]!, sinks)} }`;
  const sink = RECEIVER_SINKS[type];
  if (sink) {
    sinks.add(sink.block);
    return sink.ref;
  }
  switch (type) {
    case 'int':
    case 'number':
      return '1';
    case 'bool':
      return 'true';
    case 'duration':
      return '"1s"';
    default:
      return '"example"';
  }
}
