import type { Block } from '../lib/config/ast.js';
import { formatConfig } from '../lib/config/format.js';
import { parseConfig } from '../lib/config/parser.js';
import type { ExportResult } from './api.js';
import { CONFIG_FILE, configProblems } from './run.js';

const FORWARD_TO = [
  '  // Where the processed entries go: replace with the receivers of your config.',
  '  forward_to = [loki.write.default.receiver]',
].join('\n');

/**
 * Turns the playground's config into a complete `logs.process` block for a real config file:
 * bare stages are wrapped in `logs.process "default"`, a block without `forward_to` gets one,
 * and the result is in canonical form (comments kept).
 */
export function exportConfig(config: string): ExportResult {
  let blocks: Block[];
  try {
    blocks = parseConfig(config, CONFIG_FILE).body.filter((s): s is Block => s.kind === 'block');
  } catch (err) {
    return { config: '', errors: configProblems(err) };
  }
  const process = blocks.length === 1 && blocks[0]!.name === 'logs.process' ? blocks[0]! : undefined;
  let text: string;
  if (!process) {
    const body = config.replace(/\s+$/, '');
    text = `logs.process "default" {\n${body}\n\n${FORWARD_TO}\n}\n`;
  } else if (process.body.some((s) => s.kind === 'attribute' && s.name === 'forward_to')) {
    text = config;
  } else {
    const end = process.endPos.offset;
    text = `${config.slice(0, end).replace(/\s+$/, '')}\n\n${FORWARD_TO}\n${config.slice(end)}`;
  }
  try {
    return { config: formatConfig(parseConfig(text, CONFIG_FILE)), errors: [] };
  } catch (err) {
    return { config: text, errors: configProblems(err) };
  }
}
