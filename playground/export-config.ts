import type { Attribute, Block } from '../lib/config/ast.js';
import { formatConfig } from '../lib/config/format.js';
import { parseConfig } from '../lib/config/parser.js';
import type { ExportResult } from './api.js';
import { CONFIG_FILE, configProblems } from './run.js';

const FORWARD_TO = [
  '  // Where the processed entries go: replace with the receivers of your config.',
  '  forward_to = [logs.write.default.receiver]',
].join('\n');

/** The receiver FORWARD_TO names, so the exported file is complete as it stands. */
const WRITER = [
  '// Sends the processed entries to Loki: point url at your own push endpoint.',
  'logs.write "default" {',
  '  endpoint {',
  '    url = "http://localhost:3100/loki/api/v1/push"',
  '  }',
  '}',
].join('\n');

/**
 * Turns the playground's config into a complete config file: bare stages are wrapped in
 * `logs.process "default"`; a block without `forward_to` (or with an empty one, as the samples
 * have) gets one sending to a `logs.write "default"` block added after it; the result is in
 * canonical form (comments kept). A non-empty `forward_to` is the user's own and is kept as it is.
 */
export function exportConfig(config: string): ExportResult {
  let blocks: Block[];
  try {
    blocks = parseConfig(config, CONFIG_FILE).body.filter((s): s is Block => s.kind === 'block');
  } catch (err) {
    return { config: '', errors: configProblems(err) };
  }
  const process = blocks.length === 1 && blocks[0]!.name === 'logs.process' ? blocks[0]! : undefined;
  const forwardTo = process?.body.find((s): s is Attribute => s.kind === 'attribute' && s.name === 'forward_to');
  let text: string;
  if (!process) {
    const body = config.replace(/\s+$/, '');
    text = `logs.process "default" {\n${body}\n\n${FORWARD_TO}\n}\n\n${WRITER}\n`;
  } else if (forwardTo && !isEmptyList(forwardTo)) {
    text = config;
  } else {
    // An empty `forward_to` is taken out and written again like a missing one.
    const source = forwardTo?.endPos ? config.slice(0, forwardTo.pos.offset) + config.slice(forwardTo.endPos.offset) : config;
    const end = process.endPos.offset - (source === config ? 0 : config.length - source.length);
    const rest = source.slice(end).replace(/\s+$/, '');
    text = `${source.slice(0, end).replace(/\s+$/, '')}\n\n${FORWARD_TO}\n${rest}\n\n${WRITER}\n`;
  }
  try {
    return { config: formatConfig(parseConfig(text, CONFIG_FILE)), errors: [] };
  } catch (err) {
    return { config: text, errors: configProblems(err) };
  }
}

function isEmptyList(attribute: Attribute): boolean {
  return attribute.value.kind === 'array' && attribute.value.items.length === 0;
}
