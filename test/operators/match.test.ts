import fc from 'fast-check';
import { Registry } from 'prom-client';
import { from, mergeMap, Observable, Subject, toArray } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import type { Entry } from '../../core/entry.js';
import { buildPipeline, ingress, pipeline } from '../../core/pipeline.js';
import { loadStageList } from '../../core/process.js';
import { defineStage, unregisterStage } from '../../core/stage.js';
import { match, staticLabels } from '../../operators/index.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);

// A stage that holds every entry until its input ends, then emits them in reverse: it stands for
// the operator stages (multiline, limit, cri) a match block may contain.
let disposedHolds = 0;
const holdUntilEnd = defineStage<Record<string, never>>({
  name: 'test_hold_until_end',
  doc: 'Test stage: holds entries until the end of input, then emits them reversed.',
  fields: {},
  build: () => ({
    kind: 'operator',
    operator: (source) =>
      source.pipe(
        toArray(),
        mergeMap((held) => from(held.reverse())),
      ),
    dispose: () => {
      disposedHolds++;
    },
  }),
});
afterAll(() => unregisterStage('test_hold_until_end'));

async function droppedCount(registry: Registry, reason: string): Promise<number> {
  const metric = await registry.getSingleMetric('logs_process_dropped_lines_total')!.get();
  return metric.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

function keepBlock(selector: string, nested = 'stage.static_labels {\n    values = { matched = "yes" }\n  }'): string {
  return `stage.match {\n  selector = ${JSON.stringify(selector)}\n  ${nested}\n}`;
}

function matchedLines(selector: string, inputs: Entry[]): string[] {
  return runConfig(keepBlock(selector), inputs)
    .entries.filter((e) => e.labels.matched === 'yes')
    .map((e) => e.line);
}

describe('stage.match', () => {
  describe('selector', () => {
    it('tests label equality and inequality, a missing label comparing as ""', () => {
      const inputs = [entry('a', { app: 'api' }), entry('b', { app: 'web' }), entry('c')];
      expect(matchedLines('{app="api"}', inputs)).toEqual(['a']);
      expect(matchedLines('{app!="api"}', inputs)).toEqual(['b', 'c']);
      expect(matchedLines('{app=""}', inputs)).toEqual(['c']);
    });

    it('anchors label regexes fully and lets "." match a newline', () => {
      const inputs = [entry('a', { app: 'loki' }), entry('b', { app: 'lok' }), entry('c', { app: 'lo\nki' })];
      expect(matchedLines('{app=~"lok"}', inputs)).toEqual(['b']);
      expect(matchedLines('{app=~"lo.ki"}', inputs)).toEqual(['c']);
      expect(matchedLines('{app!~"lok.*"}', inputs)).toEqual(['c']);
    });

    it('ANDs line filters, regex filters searching unanchored', () => {
      const inputs = [entry('GET /a 500'), entry('GET /b 200'), entry('POST /a 500')];
      expect(matchedLines('{x=""} |= "GET" |~ "5\\\\d\\\\d"', inputs)).toEqual(['GET /a 500']);
      expect(matchedLines('{x=""} != "GET" !~ "^P"', inputs)).toEqual([]);
    });

    it('takes backquoted raw strings as values, without escapes', () => {
      const inputs = [entry('took 12ms', { app: 'foo' }), entry('took \\d', { app: 'foo' }), entry('took 3ms', { app: 'bar' })];
      expect(matchedLines('{app=`foo`}', inputs)).toEqual(['took 12ms', 'took \\d']);
      expect(matchedLines('{app=~`f.+`} |~ `\\d+ms`', inputs)).toEqual(['took 12ms']);
      expect(matchedLines('{app=`foo`} |= `\\d`', inputs)).toEqual(['took \\d']);
    });

    it('accepts comments, raw whitespace and several matchers', () => {
      expect(
        matchedLines('{ app = "api" , env=~"prod|dev" } // only api', [
          entry('a', { app: 'api', env: 'dev' }),
          entry('b', { app: 'api', env: 'qa' }),
        ]),
      ).toEqual(['a']);
    });
  });

  describe('keep', () => {
    it('runs the nested stages on matching entries only and passes the others unchanged', () => {
      const { entries } = runConfig(keepBlock('{app="api"}'), [entry('a', { app: 'api' }), entry('b', { app: 'web' })]);
      expect(entries.map((e) => [e.line, e.labels])).toEqual([
        ['a', { app: 'api', matched: 'yes' }],
        ['b', { app: 'web' }],
      ]);
    });

    it('copies the current labels into the extracted map again before the nested stages', () => {
      const config = `stage.static_labels {\n  values = { app = "relabelled" }\n}\n${keepBlock('{app="relabelled"}', 'stage.output {\n    source = "app"\n  }')}`;
      const { entries } = runConfig(config, [entry('line', { app: 'original' })]);
      expect(entries[0]!.line).toBe('relabelled');
      expect(entries[0]!.extracted.app).toBe('relabelled');
    });

    it('does not re-seed entries that do not match', () => {
      const config = `stage.static_labels {\n  values = { app = "relabelled" }\n}\n${keepBlock('{app="other"}')}`;
      const { entries } = runConfig(config, [entry('line', { app: 'original' })]);
      expect(entries[0]!.extracted.app).toBe('original');
    });

    it('treats an empty action as keep', () => {
      const config =
        'stage.match {\n  selector = "{app=\\"api\\"}"\n  action = ""\n  stage.static_labels {\n    values = { matched = "yes" }\n  }\n}';
      expect(runConfig(config, [entry('a', { app: 'api' })]).entries[0]!.labels.matched).toBe('yes');
    });

    it('lets nested stages drop entries and count them', async () => {
      const config = keepBlock('{app="api"}', 'stage.drop {\n    expression = "debug"\n  }');
      const { entries, registry } = runConfig(config, [
        entry('debug 1', { app: 'api' }),
        entry('debug 2', { app: 'web' }),
        entry('info', { app: 'api' }),
      ]);
      expect(entries.map((e) => e.line)).toEqual(['debug 2', 'info']);
      expect(await droppedCount(registry, 'drop_stage')).toBe(1);
    });

    it('nests match blocks to any depth', () => {
      const inner =
        'stage.match {\n    selector = "{env=\\"prod\\"}"\n    stage.match {\n      selector = "{team=\\"a\\"}"\n      stage.static_labels {\n        values = { deep = "yes" }\n      }\n    }\n  }';
      const { entries } = runConfig(keepBlock('{app="api"}', inner), [
        entry('1', { app: 'api', env: 'prod', team: 'a' }),
        entry('2', { app: 'api', env: 'prod', team: 'b' }),
        entry('3', { app: 'web', env: 'prod', team: 'a' }),
      ]);
      expect(entries.map((e) => e.labels.deep)).toEqual(['yes', undefined, undefined]);
    });

    it('is one per-entry function when every nested stage is per-entry', () => {
      const built = buildPipeline([match({ selector: '{a="1"}', stages: [staticLabels({ values: { b: '2' } }).spec] }).spec], {
        clock: new ManualClock(0n),
        registry: new Registry(),
      });
      expect(built.process).toBeDefined();
      expect(built.process!(ingress(entry('x', { a: '1' })))!.labels).toEqual({ a: '1', b: '2' });
    });
  });

  describe('keep with an operator stage nested', () => {
    const config = keepBlock('{app="api"}', 'stage.test_hold_until_end {}');

    it('passes other entries straight on and flushes the nested pipeline when the input ends', () => {
      const { entries } = runConfig(config, [
        entry('a1', { app: 'api' }),
        entry('w1', { app: 'web' }),
        entry('a2', { app: 'api' }),
        entry('w2', { app: 'web' }),
      ]);
      expect(entries.map((e) => e.line)).toEqual(['w1', 'w2', 'a2', 'a1']);
    });

    it('is an operator rather than a per-entry function', () => {
      const built = buildPipeline([match({ selector: '{a="1"}', stages: [holdUntilEnd({}).spec] }).spec], {
        clock: new ManualClock(0n),
        registry: new Registry(),
      });
      expect(built.process).toBeUndefined();
    });

    it('re-seeds labels before the nested pipeline', () => {
      const nested = 'stage.test_hold_until_end {}\n  stage.output {\n    source = "app"\n  }';
      const pre = 'stage.static_labels {\n  values = { app = "api" }\n}\n';
      const { entries } = runConfig(pre + keepBlock('{app="api"}', nested), [entry('x', { app: 'web' })]);
      expect(entries.map((e) => e.line)).toEqual(['api']);
    });

    it('completes only after the nested pipeline has completed', async () => {
      const input = new Subject<Entry>();
      const seen: string[] = [];
      let completed = false;
      const sub = input
        .pipe(
          pipeline([match({ selector: '{a="1"}', stages: [holdUntilEnd({}).spec] })], {
            clock: new ManualClock(0n),
            registry: new Registry(),
          }),
        )
        .subscribe({
          next: (e) => seen.push(e.line),
          complete: () => {
            completed = true;
            seen.push('<end>');
          },
        });
      input.next(entry('held', { a: '1' }));
      input.next(entry('passed', { a: '2' }));
      expect(seen).toEqual(['passed']);
      input.complete();
      expect(completed).toBe(true);
      expect(seen).toEqual(['passed', 'held', '<end>']);
      sub.unsubscribe();
    });

    it('runs a nested multiline stage, flushing on its timer and at the end of input', () => {
      const clock = new ManualClock(0n);
      const input = new Subject<Entry>();
      const seen: string[] = [];
      const specs = loadStageList(
        keepBlock('{app="java"}', 'stage.multiline {\n    firstline = "^\\\\d"\n    max_wait_time = "1s"\n  }'),
        'test.alloy',
      );
      const built = buildPipeline(specs, { clock, registry: new Registry() });
      built.operator(input).subscribe((e) => seen.push(e.line));
      const send = (line: string, app: string) => input.next(ingress(entry(line, { app })));
      send('1 boom', 'java');
      send('  at a', 'java');
      send('other', 'web');
      send('2 bang', 'java');
      expect(seen).toEqual(['other', '1 boom\n  at a']);
      clock.advanceBy(1000);
      expect(seen).toEqual(['other', '1 boom\n  at a', '2 bang']);
      send('3 last', 'java');
      input.complete();
      expect(seen).toEqual(['other', '1 boom\n  at a', '2 bang', '3 last']);
      built.dispose();
    });

    it('propagates source errors and disposes the nested stages on teardown', () => {
      const before = disposedHolds;
      const errors: unknown[] = [];
      const sub = new Observable<Entry>((s) => {
        s.next(entry('x', { a: '2' }));
        s.error(new Error('boom'));
      })
        .pipe(
          pipeline([match({ selector: '{a="1"}', stages: [holdUntilEnd({}).spec] })], {
            clock: new ManualClock(0n),
            registry: new Registry(),
          }),
        )
        .subscribe({ error: (err) => errors.push(err) });
      expect(errors).toEqual([new Error('boom')]);
      sub.unsubscribe();
      expect(disposedHolds).toBe(before + 1);
    });
  });

  describe('drop', () => {
    it('drops matching entries and counts them under match_stage', async () => {
      const { entries, registry } = runConfig('stage.match {\n  selector = "{app=\\"api\\"} |= \\"noise\\""\n  action = "drop"\n}', [
        entry('noise', { app: 'api' }),
        entry('signal', { app: 'api' }),
        entry('noise', { app: 'web' }),
      ]);
      expect(entries.map((e) => [e.line, e.labels.app])).toEqual([
        ['signal', 'api'],
        ['noise', 'web'],
      ]);
      expect(await droppedCount(registry, 'match_stage')).toBe(1);
    });

    it('counts under drop_counter_reason, an empty one meaning match_stage', async () => {
      const custom = runConfig('stage.match {\n  selector = "{app=\\"api\\"}"\n  action = "drop"\n  drop_counter_reason = "noisy"\n}', [
        entry('x', { app: 'api' }),
      ]);
      expect(await droppedCount(custom.registry, 'noisy')).toBe(1);
      const empty = runConfig('stage.match {\n  selector = "{app=\\"api\\"}"\n  action = "drop"\n  drop_counter_reason = ""\n}', [
        entry('x', { app: 'api' }),
      ]);
      expect(await droppedCount(empty.registry, 'match_stage')).toBe(1);
    });
  });

  describe('validation', () => {
    it('requires a selector', () => {
      expect(() => runConfig('stage.match {\n  selector = ""\n  action = "drop"\n}', [])).toThrow(
        'test.alloy:2:3: stage.match: selector statement required for match stage',
      );
      expect(() => runConfig('stage.match {\n  action = "drop"\n}', [])).toThrow(
        'test.alloy:1:1: stage.match: missing required attribute "selector"',
      );
    });

    it("rejects an unknown action at the attribute, with the reference's text", () => {
      expect(() => runConfig('stage.match {\n  selector = "{a=\\"b\\"}"\n  action = "nope"\n}', [])).toThrow(
        /^test\.alloy:3:3: stage\.match: match stage action should be 'keep' or 'drop'$/,
      );
    });

    it("requires nested stages for keep and forbids them for drop, with the reference's texts", () => {
      expect(() => runConfig('stage.match {\n  selector = "{a=\\"b\\"}"\n}', [])).toThrow(
        "test.alloy:1:1: stage.match: match stage requires at least one additional stage to be defined in '- stages'",
      );
      expect(() =>
        runConfig(
          'stage.match {\n  selector = "{a=\\"b\\"}"\n  action = "drop"\n  stage.static_labels {\n    values = { a = "b" }\n  }\n}',
          [],
        ),
      ).toThrow('test.alloy:1:1: stage.match: match stage configured to drop entries cannot contains stages');
    });

    it('reports selector syntax errors with the parser position', () => {
      expect(() => runConfig('stage.match {\n  selector = "{}"\n  action = "drop"\n}', [])).toThrow(
        'test.alloy:2:3: stage.match: invalid selector syntax for match stage: parse error at line 1, col 2: syntax error: unexpected }, expecting IDENTIFIER',
      );
      expect(() => match({ selector: '{a="b"} | status >= 200', action: 'drop' })).toThrow(
        /invalid selector syntax for match stage: parse error at line 1, col 9/,
      );
    });

    it('rejects invalid label and line regexes', () => {
      expect(() => match({ selector: '{a=~"("}', action: 'drop' })).toThrow(
        /invalid selector syntax for match stage: invalid regular expression in label matcher a=~/,
      );
      expect(() => match({ selector: '{a="b"} !~ "[]"', action: 'drop' })).toThrow(
        /invalid selector syntax for match stage: invalid regular expression in line filter !~/,
      );
    });

    it('reports a selector error at a two-character operator at line 0, as the reference does', () => {
      expect(() => match({ selector: '{foo |= "x"}', action: 'drop' })).toThrow(
        'stage.match: invalid selector syntax for match stage: parse error at line 0, col 6: syntax error: unexpected |=, expecting = or != or =~ or !~',
      );
    });

    it("wraps a failure to build the nested pipeline in the reference's words, at the nested stage", () => {
      const config = [
        'stage.match {',
        '  selector = "{a=\\"b\\"}"',
        '  stage.metrics {',
        '    metric.counter {',
        '      name      = "dropped_lines_total"',
        '      prefix    = "logs_process_"',
        '      match_all = true',
        '      action    = "inc"',
        '    }',
        '  }',
        '}',
      ].join('\n');
      expect(() => runConfig(config, [])).toThrow(
        /^test\.alloy:3:3: stage\.match > stage\.metrics: match stage failed to create pipeline: metric "logs_process_dropped_lines_total" is already registered by another component$/,
      );
    });

    it('reports errors of nested stages at their own position', () => {
      expect(() => runConfig('stage.match {\n  selector = "{a=\\"b\\"}"\n  stage.drop {\n    expression = "("\n  }\n}', [])).toThrow(
        /^test\.alloy:4:19: stage\.match > stage\.drop: drop stage regex compilation error/,
      );
    });
  });

  describe('properties', () => {
    const labelSets = fc.dictionary(fc.constantFrom('app', 'env'), fc.constantFrom('api', 'web', ''), { maxKeys: 2 });
    const lines = fc.constantFrom('error x', 'info y', '', 'error');

    it('keep never changes entries that do not match', () => {
      fc.assert(
        fc.property(fc.array(fc.record({ labels: labelSets, line: lines }), { maxLength: 6 }), (inputs) => {
          const { entries } = runConfig(
            keepBlock('{app="api"} |= "error"', 'stage.static_labels {\n    values = { touched = "yes" }\n  }'),
            inputs.map((i) => entry(i.line, { ...i.labels })),
          );
          expect(entries).toHaveLength(inputs.length);
          inputs.forEach((input, n) => {
            const matches = input.labels.app === 'api' && input.line.includes('error');
            if (!matches) {
              expect(entries[n]!.labels).toEqual(input.labels);
              expect(entries[n]!.line).toBe(input.line);
            } else {
              expect(entries[n]!.labels).toEqual({ ...input.labels, touched: 'yes' });
            }
          });
        }),
        { numRuns: NUM_RUNS },
      );
    });

    it('drop never adds entries and keeps exactly the non-matching ones', () => {
      fc.assert(
        fc.property(fc.array(fc.record({ labels: labelSets, line: lines }), { maxLength: 6 }), (inputs) => {
          const { entries } = runConfig(
            'stage.match {\n  selector = "{env!=\\"web\\"} !~ \\"^info\\""\n  action = "drop"\n}',
            inputs.map((i) => entry(i.line, { ...i.labels })),
          );
          const expected = inputs.filter((i) => i.labels.env === 'web' || i.line.startsWith('info'));
          expect(entries.map((e) => [e.line, e.labels])).toEqual(expected.map((i) => [i.line, i.labels]));
        }),
        { numRuns: NUM_RUNS },
      );
    });
  });
});
