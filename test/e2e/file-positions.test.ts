/**
 * logs.source.file across SIGKILL: `rivulet run` as a child process tails a file through a
 * rate-limited pipeline into logs.echo and is killed three times mid-file. After each restart the
 * lines read again must be about those written out during the positions_sync_period before the
 * kill: within a quarter period more, for the batch in flight (kept to a sixteenth of a period)
 * and timers firing late on a loaded machine. No line may be lost. (With batches of 1000 lines,
 * which take 2.5 s each to go through here, the positions saved lag by up to a batch and a kill
 * repeats half as much again as a period.)
 */
import { mkdtempSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnRun, type ChildRun } from './support.js';

const TOTAL = 2400;
const SYNC_MS = 800;
const RATE = 400;
/** Lines written out by each run before it is killed. */
const PER_RUN = 500;

const children: ChildRun[] = [];
afterEach(() => {
  for (const run of children.splice(0)) if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
});

function echoedLines(file: string): string[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { line: string }).line);
}

/**
 * Cuts off a line the killed process left half written: SIGKILL can stop a large write part way,
 * and the next run's output would then run on from the half line. That entry was never
 * acknowledged, so the next run reads it again.
 */
function dropTornLine(file: string): void {
  let text: Buffer;
  try {
    text = readFileSync(file);
  } catch {
    return;
  }
  if (text.length > 0 && text[text.length - 1] !== 0x0a) truncateSync(file, text.lastIndexOf(0x0a) + 1);
}

function echoedCount(file: string): number {
  try {
    const text = readFileSync(file, 'latin1');
    let count = 0;
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) count++;
    return count;
  } catch {
    return 0;
  }
}

describe('logs.source.file killed with SIGKILL', () => {
  it('reads again about the lines written out in one positions_sync_period, and loses none', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-file-kill-'));
    const log = join(dir, 'app.log');
    const echo = join(dir, 'echo.jsonl');
    const config = join(dir, 'run.alloy');
    writeFileSync(log, Array.from({ length: TOTAL }, (_, i) => `line ${i}\n`).join(''));
    writeFileSync(
      config,
      `logs.source.file "in" {
  path = ${JSON.stringify(log)}
  positions_file = ${JSON.stringify(join(dir, 'positions.json'))}
  positions_sync_period = "${SYNC_MS}ms"
  file_watch {
    min_poll_frequency = "50ms"
    max_poll_frequency = "100ms"
  }
  forward_to = [logs.process.slow.receiver]
}

logs.process "slow" {
  stage.limit {
    rate = ${RATE}
    burst = 10
    drop = false
  }
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" {
  path = ${JSON.stringify(echo)}
}
`,
    );

    const kills: Array<{ echoedAtKill: number; window: number }> = [];
    for (let k = 0; k < 3; k++) {
      const run = await spawnRun(config, []);
      children.push(run);
      const startCount = echoedCount(echo);
      const samples: Array<{ at: number; count: number }> = [];
      for (;;) {
        const count = echoedCount(echo);
        samples.push({ at: Date.now(), count });
        if (count - startCount >= PER_RUN) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      run.child.kill('SIGKILL');
      await run.exited;
      dropTornLine(echo);
      const echoedAtKill = echoedCount(echo);
      // Lines written out during the sync period before the kill: counted from the last sample at
      // least SYNC_MS before it, so over one period and at most one sampling interval more.
      const since = samples.at(-1)!.at - SYNC_MS;
      const before = [...samples].reverse().find((s) => s.at <= since) ?? samples[0]!;
      kills.push({ echoedAtKill, window: echoedAtKill - before.count });
    }

    const last = await spawnRun(config, []);
    children.push(last);
    const deadline = Date.now() + 60_000;
    while (new Set(echoedLines(echo)).size < TOTAL && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    last.child.kill('SIGTERM');
    expect(await last.exited).toBe(0);

    const lines = echoedLines(echo);
    expect(new Set(lines).size).toBe(TOTAL);
    const duplicatesPerKill = kills.map((kill, k) => {
      const seen = new Set(lines.slice(0, kill.echoedAtKill));
      const after = lines.slice(kill.echoedAtKill, kills[k + 1]?.echoedAtKill ?? lines.length);
      return after.filter((line) => seen.has(line)).length;
    });
    for (const [k, duplicates] of duplicatesPerKill.entries()) {
      expect(
        duplicates,
        `kill ${k}: ${duplicates} lines read again, ${kills[k]!.window} written in the last sync period`,
      ).toBeLessThanOrEqual(kills[k]!.window * 1.25);
    }
    expect(lines.length - TOTAL).toBe(duplicatesPerKill.reduce((a, b) => a + b, 0));
  });
});
