import { snippetCompletion, type Completion, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { contextAt } from './context.js';
import { blockSnippet, describeField, valueSnippet, type HelpIndex } from './help.js';

/**
 * Completion from the stage registry: `stage.*` blocks where stages may go, the attributes and
 * nested blocks of the enclosing block at a statement start, and `true`/`false` or the accepted
 * values after `name =`.
 */
export function configCompletion(help: () => HelpIndex | undefined) {
  return (context: CompletionContext): CompletionResult | null => {
    const index = help();
    if (!index) return null;
    const text = context.state.doc.toString();
    const word = context.matchBefore(/[\p{L}\p{Nd}_.]*/u);
    const from = word ? word.from : context.pos;
    if (from === context.pos && !context.explicit) return null;
    const where = contextAt(text, from);
    if (where.statementStart) {
      const options: Completion[] = [];
      if (index.acceptsStages(where.blocks)) {
        for (const stage of index.stageList) {
          options.push(snippetCompletion(blockSnippet(stage), { label: stage.name, type: 'class', detail: 'stage', info: stage.doc }));
        }
        if (where.blocks.length === 1 && where.blocks[0] === 'logs.process') {
          options.push(
            snippetCompletion('forward_to = [${}]', {
              label: 'forward_to',
              type: 'property',
              detail: 'list(receiver)',
              info: 'Where the processed entries go; the playground collects them instead.',
            }),
          );
        }
        if (where.blocks.length === 0) {
          options.push(
            snippetCompletion('logs.process "${default}" {\n\t${}\n\tforward_to = []\n}', {
              label: 'logs.process',
              type: 'class',
              detail: 'component',
              info: 'A logs.process component wrapping the stages.',
            }),
          );
        }
      }
      const block = index.blockAt(where.blocks);
      if (block) {
        for (const field of block.fields) {
          options.push(
            snippetCompletion(`${field.name} = ${valueSnippet(field)}`, {
              label: field.name,
              type: 'property',
              detail: field.type,
              info: describeField(field),
              boost: field.required ? 2 : 1,
            }),
          );
        }
        for (const nested of block.blocks)
          options.push(snippetCompletion(blockSnippet(nested), { label: nested.name, type: 'class', detail: 'block', info: nested.doc }));
      }
      return options.length > 0 ? { from, options, validFor: /^[\p{L}\p{Nd}_.]*$/u } : null;
    }
    if (where.attribute !== undefined) {
      const field = index.field(where.blocks, where.attribute);
      if (!field) return null;
      const quoted = context.matchBefore(/"[^"]*/);
      if (field.oneOf && field.oneOf.length > 0) {
        const start = quoted ? quoted.from : from;
        return { from: start, options: field.oneOf.map((v) => ({ label: JSON.stringify(v), type: 'enum', info: field.doc })) };
      }
      if (field.type === 'bool') return { from, options: ['true', 'false'].map((label) => ({ label, type: 'keyword' })) };
    }
    return null;
  };
}
