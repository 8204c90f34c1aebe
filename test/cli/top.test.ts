import { EventEmitter } from 'node:events';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.js';
import { componentFlows, flowColumnsHelp, flowTable } from '../../cli/top-table.js';
import { topCommand } from '../../cli/top.js';
import { capture, eventually, startFileInstance } from '../support/running-instance.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-top-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A clock a test moves: each read of `now` after a sleep is one interval later. */
function virtualTime() {
  let at = 0;
  return { now: () => at, sleep: async (ms: number) => void (at += ms) };
}

describe('the top table', () => {
  const metrics = (
    read: number,
    sent: number,
    dropped: number,
    written: number,
  ) => `# HELP logs_source_file_read_lines_total Number of lines read.
# TYPE logs_source_file_read_lines_total counter
logs_source_file_read_lines_total{component_id="logs.source.file.in",path="/a.log"} ${read - 1}
logs_source_file_read_lines_total{component_id="logs.source.file.in",path="/b.log"} 1
# TYPE rivulet_component_sent_entries_total counter
rivulet_component_sent_entries_total{component_id="logs.source.file.in"} ${read}
rivulet_component_sent_entries_total{component_id="logs.process.p"} ${sent}
# TYPE rivulet_component_received_entries_total counter
rivulet_component_received_entries_total{component_id="logs.process.p"} ${read}
rivulet_component_received_entries_total{component_id="logs.write.loki"} ${sent}
# TYPE logs_process_dropped_lines_total counter
logs_process_dropped_lines_total{component_id="logs.process.p",component_path="/",reason="drop_stage"} ${dropped}
logs_process_dropped_lines_total{reason="drop_stage"} 999
# TYPE logs_write_sent_entries_total counter
logs_write_sent_entries_total{component_id="logs.write.loki",host="loki:3100"} ${written}
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 3
`;

  it('sums each column over the series of its component type, and reads - where a component has none', () => {
    expect(Object.fromEntries(componentFlows(metrics(10, 8, 2, 5)))).toEqual({
      'logs.process.p': { in: 10, out: 8, dropped: 2 },
      'logs.source.file.in': { in: 10, out: 10, dropped: undefined },
      'logs.write.loki': { in: 8, out: 5, dropped: undefined },
    });
  });

  it('names a component inside a module by its full id, as the run server does', () => {
    const text = `logs_process_dropped_lines_total{component_id="logs.process.main",component_path="/pipeline.a",reason="drop_stage"} 2
logs_process_dropped_lines_total{component_id="logs.process.main",component_path="/pipeline.b",reason="drop_stage"} 5
rivulet_component_received_entries_total{component_id="pipeline.a/logs.process.main"} 9
`;
    expect(Object.fromEntries(componentFlows(text))).toEqual({
      'pipeline.a/logs.process.main': { in: 9, out: undefined, dropped: 2 },
      'pipeline.b/logs.process.main': { in: undefined, out: undefined, dropped: 5 },
    });
  });

  it('prints totals and the rates a second between two reads', () => {
    expect(flowTable(componentFlows(metrics(30, 24, 6, 20)), componentFlows(metrics(10, 8, 2, 5)), 2)).toBe(
      [
        'COMPONENT            IN  IN/S  OUT  OUT/S  DROPPED  DROPPED/S',
        'logs.process.p       30  10.0   24    8.0        6        2.0',
        'logs.source.file.in  30  10.0   30   10.0        -          -',
        'logs.write.loki      24   8.0   20    7.5        -          -',
        '',
      ].join('\n'),
    );
    expect(flowTable(componentFlows(metrics(1, 1, 0, 1)), undefined, 0).split('\n')[1]).toBe(
      'logs.process.p        1     -    1      -        0          -',
    );
  });
});

describe('rivulet top', () => {
  it('says in its help which series give each column', async () => {
    const out = capture();
    expect(await main(['top', '--help'], { stdin: Readable.from([]), stdout: out.stream, stderr: new PassThrough() })).toBe(0);
    expect(out.text().endsWith(`\n\n${flowColumnsHelp().join('\n')}\n`)).toBe(true);
    expect(flowColumnsHelp().slice(0, 3)).toEqual([
      "columns, from the /metrics series with each component's component_id (- when none):",
      '  IN: rivulet_component_received_entries_total (what its receivers took over), except',
      '    logs.source.file: logs_source_file_read_lines_total',
    ]);
  });

  it('prints one table of a running instance with --once, its entries in, out and rates', async () => {
    const run = await startFileInstance(dir, 'once', { stages: ['stage.static_labels { values = { env = "prod" } }'] });
    try {
      appendFileSync(run.input, 'one\ntwo\nthree\n');
      await eventually(
        async () => (await run.registry.metrics()).includes('rivulet_component_received_entries_total{component_id="logs.echo.out"} 3'),
        'the entries',
      );
      const out = capture();
      const code = await topCommand(
        ['--url', run.url, '--once'],
        { stdin: Readable.from([]), stdout: out.stream, stderr: new PassThrough() },
        new EventEmitter(),
        virtualTime(),
      );
      expect(code).toBe(0);
      expect(out.text()).toBe(
        [
          'COMPONENT            IN  IN/S  OUT  OUT/S  DROPPED  DROPPED/S',
          'logs.echo.out         3   0.0    -      -        -          -',
          'logs.process.p        3   0.0    3    0.0        -          -',
          'logs.source.file.in   3   0.0    3    0.0        -          -',
          '',
        ].join('\n'),
      );
    } finally {
      await run.stop();
    }
  }, 30_000);

  it('redraws on a terminal every interval until SIGINT, and shows an instance that does not answer', async () => {
    const port = await freePort();
    const out = capture(true);
    const signals = new EventEmitter();
    let frames = 0;
    const code = await topCommand(
      ['--url', `http://127.0.0.1:${port}`, '--interval', '2s'],
      { stdin: Readable.from([]), stdout: out.stream, stderr: new PassThrough() },
      signals,
      {
        now: () => 0,
        sleep: async () => {
          if (++frames === 2) signals.emit('SIGINT');
        },
      },
    );
    expect(code).toBe(0);
    const frame = `\x1b[H\x1b[2Jrivulet top: http://127.0.0.1:${port}, every 2s (Ctrl-C to quit)\n\ncannot read http://127.0.0.1:${port}/metrics: connect ECONNREFUSED 127.0.0.1:${port}\n`;
    expect(out.text()).toBe(frame + frame);
    expect(signals.listenerCount('SIGINT')).toBe(0);
  });

  it('exits 3 with --once when nothing answers, and 1 for a bad interval or url', async () => {
    const port = await freePort();
    const err = capture();
    const io = { stdin: Readable.from([]), stdout: new PassThrough(), stderr: err.stream };
    expect(await topCommand(['--url', `http://127.0.0.1:${port}`, '--once'], io, new EventEmitter(), virtualTime())).toBe(3);
    expect(err.text()).toBe(`rivulet top: cannot read http://127.0.0.1:${port}/metrics: connect ECONNREFUSED 127.0.0.1:${port}\n`);
    await expect(topCommand(['--interval', '0s'], io)).rejects.toThrow('invalid --interval "0s", expected a positive duration like 1s');
    await expect(topCommand(['--interval', 'soon'], io)).rejects.toThrow('invalid --interval "soon", expected a positive duration like 1s');
    await expect(topCommand(['--url', 'nowhere'], io)).rejects.toThrow(
      'invalid --url "nowhere", expected an address like http://127.0.0.1:12345',
    );
  });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
