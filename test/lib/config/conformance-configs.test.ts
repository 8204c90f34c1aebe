import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatConfig } from '../../../lib/config/format.js';
import { parseConfig } from '../../../lib/config/parser.js';
import { ConfigErrors } from '../../../lib/config/errors.js';
import { stripPositions } from './strip.js';

interface StageCase {
  readonly name: string;
  readonly config: string;
  readonly expected: unknown;
}

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'conformance', 'stages');
const files = readdirSync(fixtures).filter((f) => f.endsWith('.json'));

function mustBeInvalid(c: StageCase): boolean {
  const expected = c.expected as { error?: string } | unknown[];
  return !Array.isArray(expected) && expected.error === 'config invalid';
}

describe.each(files)('configs of %s', (file) => {
  const cases = JSON.parse(readFileSync(join(fixtures, file), 'utf8')) as StageCase[];

  it('parse (config-invalid cases may fail, but only with ConfigErrors)', () => {
    for (const c of cases) {
      try {
        parseConfig(c.config, 'config.alloy');
      } catch (err) {
        if (!(err instanceof ConfigErrors) || !mustBeInvalid(c)) throw new Error(`${c.name}: ${String(err)}`);
      }
    }
  });

  it('format to text that parses back to the same tree, and formats to itself', () => {
    for (const c of cases) {
      let parsed;
      try {
        parsed = parseConfig(c.config, 'config.alloy');
      } catch {
        continue;
      }
      const text = formatConfig(parsed);
      const again = parseConfig(text, 'config.alloy');
      expect(stripPositions(again), c.name).toEqual(stripPositions(parsed));
      expect(formatConfig(again), c.name).toBe(text);
    }
  });
});
