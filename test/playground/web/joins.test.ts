import { describe, expect, it } from 'vitest';
import '../../../index.js';
import type { EntryTrace, RunResult } from '../../../playground/api.js';
import { runPlayground } from '../../../playground/run.js';
import { SAMPLES } from '../../../playground/samples/index.js';
import { joinedInputs, lineList } from '../../../playground/web/joins.js';

async function runSample(id: string): Promise<RunResult> {
  const sample = SAMPLES.find((s) => s.id === id)!;
  return runPlayground({ config: sample.config, input: sample.input, inputFormat: sample.inputFormat, now: sample.now });
}

describe('joinedInputs', () => {
  it('lists the CRI partial lines an entry was joined from, as stage.cri received them', async () => {
    const result = await runSample('cri');
    const carrier = result.outputs[1]!.trace;
    expect(joinedInputs(result, carrier)).toEqual([
      { trace: 1, line: 2, text: '2024-05-01T12:00:01.000000000Z stdout P {"cart":{"items":[{"sku":"A-100","qty":2},', carrier: false },
      { trace: 2, line: 3, text: '2024-05-01T12:00:01.000000001Z stdout P {"sku":"B-220","qty":1}],', carrier: false },
      { trace: carrier, line: 4, text: '2024-05-01T12:00:01.000000002Z stdout F "total":42.5}}', carrier: true },
    ]);
    expect(joinedInputs(result, result.outputs[0]!.trace)).toEqual([]);
    // A merged input was not joined from anything itself.
    expect(joinedInputs(result, 1)).toEqual([]);
  });

  it('lists the lines of a multiline block, the first line carrying it', async () => {
    const result = await runSample('java-multiline');
    const joined = joinedInputs(result, result.outputs[0]!.trace);
    expect(joined.map((j) => [j.line, j.carrier])).toEqual([
      [1, true],
      [2, false],
      [3, false],
      [4, false],
    ]);
    expect(joined[1]!.text).toBe('java.lang.IllegalStateException: card declined');
  });

  it('follows an entry merged into one that was merged on', () => {
    const trace = (id: number, line: number, fate: EntryTrace['fate']): EntryTrace => ({
      id,
      origin: { kind: 'input', input: line - 1, line },
      atMs: 0,
      steps: [{ stage: 0, outcome: 'held', before: entry(`l${line}`), after: null, changes: [], atMs: 0 }],
      fate,
    });
    const entry = (line: string) => ({ labels: {}, line, timestamp: '', structured_metadata: {}, extracted: {} });
    const result = {
      traces: [
        trace(0, 1, { kind: 'forwarded', output: 0 }),
        trace(1, 2, { kind: 'merged', stage: 0, into: 2 }),
        trace(2, 3, { kind: 'merged', stage: 0, into: 0 }),
      ],
    } as unknown as RunResult;
    expect(joinedInputs(result, 0).map((j) => [j.line, j.text])).toEqual([
      [1, 'l1'],
      [2, 'l2'],
      [3, 'l3'],
    ]);
  });
});

describe('lineList', () => {
  it('writes a run of lines as a range', () => {
    expect(lineList([2, 3, 4])).toBe('2–4');
    expect(lineList([2, 3])).toBe('2, 3');
    expect(lineList([1, 3, 4])).toBe('1, 3, 4');
  });
});
