import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { REFERENCE_COMMAND, REFERENCE_DIR, referenceExamples, referencePages } from '../../cli/reference-docs.js';
import { systemClock } from '../../core/clock.js';
import { loadStageList, startProcessRun } from '../../core/process.js';
import { componentDefinitions } from '../../core/runtime/component.js';
import { ComponentGraph } from '../../core/runtime/graph.js';
import { stageDefinitions } from '../../core/stage.js';
import { configErrorsOf } from '../../lib/config/errors.js';
import { writeMmdb } from '../../playground/samples/mmdb-writer.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'rivulet-reference-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// stage.geoip's example names a database file; it is run against a small generated one.
const geoDb = join(dir, 'GeoLite2-City.mmdb');
writeFileSync(
  geoDb,
  writeMmdb([{ network: '192.0.2.0/24', data: { city: { names: { en: 'London' } } } }], {
    ipVersion: 4,
    recordSize: 24,
    databaseType: 'GeoIP2-City',
  }),
);

function pagesOnDisk(): Map<string, string> {
  const base = join(root, REFERENCE_DIR);
  const names = readdirSync(base, { recursive: true, encoding: 'utf8' }).filter((n) => n.endsWith('.md'));
  return new Map(names.map((n) => [n.split('\\').join('/'), readFileSync(join(base, n), 'utf8')]));
}

/** What `rivulet validate` does with a stage list: decode, then build (which compiles) and dispose. */
function validateStageList(text: string, file: string): void {
  const run = startProcessRun(loadStageList(text, file), { clock: systemClock(), registry: new Registry(), onEntry: () => {} });
  run.dispose();
}

/** What `rivulet validate` does with a component graph: build every component, start none. */
async function validateGraph(text: string, file: string): Promise<void> {
  const clock = systemClock();
  const registry = new Registry();
  const graph = new ComponentGraph((id) => ({ id, clock, registry, stdout: process.stdout, log: () => {} }));
  graph.load(text, file);
  await graph.stop();
}

describe('the generated reference', () => {
  const pages = referencePages();

  it('has a page per stage and per component, and an index linking each', () => {
    const index = pages.get('README.md')!;
    for (const def of stageDefinitions()) {
      expect(pages.has(`stages/${def.name}.md`)).toBe(true);
      expect(index).toContain(`(stages/${def.name}.md)`);
    }
    for (const def of componentDefinitions()) {
      expect(pages.has(`components/${def.name}.md`)).toBe(true);
      expect(index).toContain(`(components/${def.name}.md)`);
    }
    expect(pages.size).toBe(1 + stageDefinitions().length + componentDefinitions().length);
  });

  it('documents every field with its type, default and accepted values, nested blocks included', () => {
    const write = pages.get('components/logs.write.md')!;
    expect(write).toContain('## Block endpoint > basic_auth');
    expect(write).toContain('| `url` | `string` |  | yes |');
    expect(write).toContain('| `fsync` | `string` | `"always"` | no |');
    expect(write).toContain('One of `"always"`, `"never"`.');
    expect(pages.get('stages/multiline.md')).toContain('| `max_wait_time` | `duration` | `"3s"` | no |');
  });

  it(`matches the files under ${REFERENCE_DIR} (otherwise run ${REFERENCE_COMMAND})`, () => {
    const disk = pagesOnDisk();
    const stale = [...pages].filter(([page, text]) => disk.get(page) !== text).map(([page]) => page);
    const extra = [...disk.keys()].filter((page) => !pages.has(page));
    expect({ stale, extra }, `${REFERENCE_DIR} is out of date: run ${REFERENCE_COMMAND}`).toEqual({ stale: [], extra: [] });
  });

  describe('every example is valid', () => {
    for (const example of referenceExamples()) {
      it(`${example.page} (${example.kind})`, async () => {
        const config = example.config.replaceAll('"GeoLite2-City.mmdb"', JSON.stringify(geoDb));
        const errors: string[] = [];
        try {
          if (example.kind === 'stage-list') validateStageList(config, example.page);
          else await validateGraph(config, example.page);
        } catch (err) {
          errors.push(...configErrorsOf(err).map((e) => e.message));
        }
        expect(errors).toEqual([]);
        expect(pages.get(example.page)).toContain(`\`\`\`alloy\n${example.config}\`\`\``);
      });
    }
  });
});
