import { hoverTooltip, type Tooltip } from '@codemirror/view';
import type { BlockHelp, FieldHelp } from '../api.js';
import { contextAt, wordAt } from './context.js';
import type { HelpIndex } from './help.js';
import { describeField } from './help.js';

/** Hover help over stage names, nested block names and attribute names, from the registry. */
export function configHover(help: () => HelpIndex | undefined) {
  return hoverTooltip((view, pos): Tooltip | null => {
    const index = help();
    if (!index) return null;
    const text = view.state.doc.toString();
    const word = wordAt(text, pos);
    if (!word) return null;
    const where = contextAt(text, word.from);
    const stage = index.stage(word.word);
    const nested = stage ? undefined : index.blockAt(where.blocks)?.blocks.find((b) => b.name === word.word);
    const field = stage || nested ? undefined : where.statementStart ? index.field(where.blocks, word.word) : undefined;
    if (!stage && !nested && !field) return null;
    return {
      pos: word.from,
      end: word.to,
      above: true,
      create: () => ({ dom: stage || nested ? blockCard((stage ?? nested)!) : fieldCard(field!) }),
    };
  });
}

function blockCard(block: BlockHelp): HTMLElement {
  const card = element('div', 'help-card');
  card.append(element('div', 'help-title', block.name), element('p', 'help-doc', block.doc));
  if (block.fields.length > 0 || block.blocks.length > 0) {
    const list = element('dl', 'help-fields');
    for (const f of block.fields)
      list.append(element('dt', '', `${f.name}`), element('dd', '', `${describeField(f).replace('\n', ' — ')}`));
    for (const b of block.blocks)
      list.append(
        element('dt', '', `${b.name} { }`),
        element('dd', '', `block${b.multiple ? ', repeatable' : ''}${b.required ? ', required' : ''} — ${b.doc}`),
      );
    card.append(list);
  }
  if (block.stages) card.append(element('p', 'help-doc', 'Holds nested stage.* blocks.'));
  return card;
}

function fieldCard(field: FieldHelp): HTMLElement {
  const card = element('div', 'help-card');
  const [facts, doc] = describeField(field).split('\n');
  card.append(element('div', 'help-title', `${field.name}: ${facts}`), element('p', 'help-doc', doc ?? ''));
  return card;
}

function element(tag: string, className: string, text?: string): HTMLElement {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}
