import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import type { LogsReceiver } from '../../../core/receiver.js';
import { validatedArgs } from '../../../core/runtime/component.js';
import { LogsSourceFile, logsSourceFileComponent } from '../../../receivers/logs-source-file.js';
import { componentArgs, eventually, recordingReceiver, testContext } from '../loki/harness.js';

/** The component's arguments for the block in `text`, validated as its build validates them. */
const fileArgs = (text: string, receivers: readonly LogsReceiver[], file?: string) =>
  validatedArgs(logsSourceFileComponent, componentArgs(logsSourceFileComponent, text, receivers, file), { id: 'logs.source.file.test' });

const dir = mkdtempSync(join(tmpdir(), 'rivulet-file-metrics-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function value(registry: Registry, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return undefined;
  const data = await metric.get();
  return data.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
}

describe('logs.source.file metrics', () => {
  it('counts the lines and bytes read, the file size and the active files', async () => {
    const file = join(dir, 'app.log');
    writeFileSync(file, 'one\ntwo\nthree\n');
    const registry = new Registry();
    const receiver = recordingReceiver();
    const text = `logs.source.file "m" {\n  path = ${JSON.stringify(file)}\n  file_watch {\n    min_poll_frequency = "20ms"\n    max_poll_frequency = "40ms"\n  }\n  forward_to = [r0]\n}\n`;
    const source = new LogsSourceFile(fileArgs(text, [receiver]), testContext('logs.source.file.m', { registry }));
    await source.start();
    try {
      const series = { component_id: 'logs.source.file.m', path: file };
      await eventually(async () => (await value(registry, 'logs_source_file_read_lines_total', series)) === 3);
      expect(await value(registry, 'logs_source_file_read_bytes_total', series)).toBe(14);
      expect(await value(registry, 'logs_source_file_file_bytes_total', series)).toBe(14);
      expect(await value(registry, 'logs_source_file_files_active_total', { component_id: 'logs.source.file.m' })).toBe(1);

      // An unfinished line is in the file's size but not read yet.
      appendFileSync(file, 'four\nfiv');
      await eventually(async () => (await value(registry, 'logs_source_file_read_lines_total', series)) === 4);
      await eventually(async () => (await value(registry, 'logs_source_file_file_bytes_total', series)) === 22);
      expect(await value(registry, 'logs_source_file_read_bytes_total', series)).toBe(19);
      expect(receiver.entries.map((e) => e.line)).toEqual(['one', 'two', 'three', 'four']);

      const text = await registry.metrics();
      expect(text).toContain(`logs_source_file_read_lines_total{component_id="logs.source.file.m",path="${file}"} 4`);
    } finally {
      await source.stop();
    }
    expect(await value(registry, 'logs_source_file_files_active_total', { component_id: 'logs.source.file.m' })).toBe(0);
  });
});
