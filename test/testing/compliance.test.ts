import { delay, Observable } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../core/entry.js';
import { t } from '../../lib/config/schema.js';
import { defineStage, unregisterStage, type StageImpl } from '../../core/stage.js';
import { checkStageCompliance, stageCompliance } from '../../testing/index.js';

const OPTIONS = { seed: 11, numRuns: 20 };

/** An operator stage built from a subscribe function. */
function operatorStage(
  name: string,
  subscribe: (source: Observable<Entry>, subscriber: import('rxjs').Subscriber<Entry>) => () => void,
  extra: Partial<Parameters<typeof defineStage>[0]> = {},
) {
  return defineStage<Record<string, never>>({
    name,
    doc: 'Broken on purpose.',
    fields: {},
    build: (): StageImpl => ({
      kind: 'operator',
      operator: (source) => new Observable<Entry>((subscriber) => subscribe(source, subscriber)),
    }),
    ...extra,
  });
}

const neverCompletes = operatorStage('kit_never_completes', (source, subscriber) => {
  const sub = source.subscribe({ next: (e) => subscriber.next(e), error: (err) => subscriber.error(err) });
  return () => sub.unsubscribe();
});

const swallowsErrors = operatorStage('kit_swallows_errors', (source, subscriber) => {
  const sub = source.subscribe({
    next: (e) => subscriber.next(e),
    error: () => subscriber.complete(),
    complete: () => subscriber.complete(),
  });
  return () => sub.unsubscribe();
});

const leaksTimer = defineStage<Record<string, never>>({
  name: 'kit_leaks_timer',
  doc: 'Broken on purpose: its timer outlives the subscription.',
  fields: {},
  build: (_config, ctx): StageImpl => ({
    kind: 'operator',
    operator: (source) =>
      new Observable<Entry>((subscriber) => {
        ctx.clock.scheduler.schedule(() => {}, 60_000);
        const sub = source.subscribe(subscriber);
        return () => sub.unsubscribe();
      }),
  }),
});

const usesRealTime = defineStage<Record<string, never>>({
  name: 'kit_real_time',
  doc: 'Broken on purpose: delays on the real async scheduler.',
  fields: {},
  build: (): StageImpl => ({ kind: 'operator', operator: (source) => source.pipe(delay(0)) }),
});

const dropsSilently = defineStage<{ word: string }>({
  name: 'kit_drops_silently',
  doc: 'Broken on purpose: drops without counting.',
  fields: { word: { kind: t.string, default: '', doc: 'Lines holding it are dropped (all of them by default).' } },
  build: (config): StageImpl => ({ kind: 'map', process: (entry) => (entry.line.includes(config.word) ? null : entry) }),
});

const countsDrops = defineStage<{ word: string }>({
  name: 'kit_counts_drops',
  doc: 'A correct filter.',
  fields: { word: { kind: t.string, default: 'request', doc: 'Lines holding it are dropped.' } },
  build: (config, ctx): StageImpl => ({
    kind: 'map',
    process: (entry) => {
      if (!entry.line.includes(config.word)) return entry;
      ctx.metrics.droppedLines.inc({ reason: 'kit_word' });
      return null;
    },
  }),
});

afterAll(() =>
  ['kit_never_completes', 'kit_swallows_errors', 'kit_leaks_timer', 'kit_real_time', 'kit_drops_silently', 'kit_counts_drops'].forEach(
    unregisterStage,
  ),
);

/** The first line of the failure of the named check. */
async function failureOf(checks: ReturnType<typeof stageCompliance>, ending: string): Promise<string> {
  const check = checks.find((c) => c.name.endsWith(ending));
  if (!check) throw new Error(`no check ending with ${ending}`);
  try {
    await check.run();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`${check.name} passed`);
}

describe('stageCompliance', () => {
  it('names its checks as sentences about the stage', () => {
    expect(stageCompliance(countsDrops).map((c) => c.name)).toEqual([
      'stage.kit_counts_drops completes when the source completes',
      'stage.kit_counts_drops propagates errors from the source',
      'stage.kit_counts_drops releases timers and subscriptions on unsubscribe',
      'stage.kit_counts_drops works on virtual time',
      'stage.kit_counts_drops counts dropped entries in logs_process_dropped_lines_total',
      'stage.kit_counts_drops rejects invalid configs with positioned errors',
    ]);
  });

  it('passes a correct stage, with a report per check', async () => {
    const results = await checkStageCompliance(countsDrops, { ...OPTIONS, dropReasons: ['kit_word'] });
    expect(results.map((r) => [r.name.replace('stage.kit_counts_drops ', ''), r.passed])).toEqual([
      ['completes when the source completes', true],
      ['propagates errors from the source', true],
      ['releases timers and subscriptions on unsubscribe', true],
      ['works on virtual time', true],
      ['counts dropped entries in logs_process_dropped_lines_total', true],
      ['rejects invalid configs with positioned errors', true],
    ]);
  });

  it('fails a stage that does not complete, with the input that shows it', async () => {
    const message = await failureOf(stageCompliance(neverCompletes, OPTIONS), 'completes when the source completes');
    expect(message.split('\n')).toEqual([
      'stage compliance (completes when the source completes) fails for stage.kit_never_completes: the source completed and every timer ran, but the stage did not complete',
      'config: {}',
      'input: none',
      'output: none',
      expect.stringMatching(/^replay with \{ seed: 11 \} \(shrunk \d+ times\)$/),
    ]);
  });

  it('fails a stage that turns an error into completion', async () => {
    const message = await failureOf(stageCompliance(swallowsErrors, OPTIONS), 'propagates errors from the source');
    expect(message.split('\n')[0]).toBe(
      'stage compliance (propagates errors from the source) fails for stage.kit_swallows_errors: the source errored, but the stage completed',
    );
  });

  it('fails a stage whose timer outlives the subscription', async () => {
    const checks = stageCompliance(leaksTimer, OPTIONS);
    const message = await failureOf(checks, 'releases timers and subscriptions on unsubscribe');
    expect(message.split('\n')[0]).toBe(
      'stage compliance (releases timers and subscriptions on unsubscribe) fails for stage.kit_leaks_timer: 1 timers were still scheduled after unsubscribe (ManualClock.pendingTimers())',
    );
    await checks.find((c) => c.name.endsWith('completes when the source completes'))!.run();
  });

  it('fails a stage that uses real timers instead of its clock', async () => {
    const message = await failureOf(stageCompliance(usesRealTime, OPTIONS), 'works on virtual time');
    expect(message.split('\n')[0]).toMatch(
      /^stage compliance \(works on virtual time\) fails for stage\.kit_real_time: the stage started \d+ real timers \(setInterval\) instead of using its clock's scheduler$/,
    );
  });

  it('fails a stage that drops entries without counting them', async () => {
    const message = await failureOf(stageCompliance(dropsSilently, OPTIONS), 'counts dropped entries in logs_process_dropped_lines_total');
    expect(message.split('\n')).toEqual([
      'stage compliance (counts dropped entries in logs_process_dropped_lines_total) fails for stage.kit_drops_silently: 1 entries did not come out, but 0 drops were counted {}',
      'config: {}',
      'input (1 entry):',
      '  #0 at 0ms {} 2000-01-01T00:00:00.000000000Z "request"',
      'output: none',
      expect.stringMatching(/^replay with \{ seed: 11 \} \(shrunk \d+ times\)$/),
    ]);
  });

  it('fails a stage that counts drops under a reason it does not declare', async () => {
    const message = await failureOf(
      stageCompliance(countsDrops, { ...OPTIONS, dropReasons: ['other'] }),
      'counts dropped entries in logs_process_dropped_lines_total',
    );
    expect(message.split('\n')[0]).toBe(
      'stage compliance (counts dropped entries in logs_process_dropped_lines_total) fails for stage.kit_counts_drops: drops were counted under unexpected reasons ["kit_word"] (expected one of ["other"])',
    );
  });

  it('accepts uncounted losses when the stage declares it merges or drops without counting', async () => {
    await stageCompliance(dropsSilently, { ...OPTIONS, countsEveryLoss: false })
      .find((c) => c.name.endsWith('logs_process_dropped_lines_total'))!
      .run();
  });

  it('fails a check whose config the stage rejects, naming the config error', async () => {
    const checks = stageCompliance(countsDrops, { ...OPTIONS, configs: [{ word: 'x', nope: 1 }] });
    await expect(checks[0]!.run()).rejects.toThrow('stage.kit_counts_drops: unrecognized attribute name "nope"');
  });
});
