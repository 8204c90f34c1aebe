import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeDockerRecord } from '../../operators/docker.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);
const BEFORE = 1_700_000_000_000_000_000n;
const run = (line: string, labels: Record<string, string> = {}) => runConfig('stage.docker {}', [entry(line, labels)]).entries[0]!;

describe('stage.docker', () => {
  it('makes log the line, stream a label and time the timestamp', () => {
    const out = run('{"log":"hello\\n","stream":"stderr","time":"2019-04-30T02:12:41.8443515Z"}', { job: 'x' });
    expect(out.line).toBe('hello\n');
    expect(out.labels).toEqual({ job: 'x', stream: 'stderr' });
    expect(out.timestamp).toBe(BigInt(Date.parse('2019-04-30T02:12:41Z')) * 1_000_000n + 844_351_500n);
    expect(out.extracted).toEqual({ job: 'x', output: 'hello\n', stream: 'stderr', timestamp: '2019-04-30T02:12:41.8443515Z' });
  });

  it('matches keys case-insensitively, as Go does', () => {
    const out = run('{"LOG":"a","Stream":"stdout","TIME":"2020-01-01T00:00:00Z"}');
    expect(out).toMatchObject({
      line: 'a',
      labels: { stream: 'stdout' },
      timestamp: BigInt(Date.parse('2020-01-01T00:00:00Z')) * 1_000_000n,
    });
  });

  it('folds the long s and the dotless i the way Go field matching does', () => {
    expect(decodeDockerRecord('{"log":"a","ſtream":"stdout","tıme":"t"}')).toEqual({ log: 'a', stream: 'stdout', time: 't' });
  });

  it('lets the last duplicate key win and ignores other fields', () => {
    expect(decodeDockerRecord('{"log":"a","log":"b","attrs":{"x":1},"stream":"stdout"}')).toEqual({ log: 'b', stream: 'stdout', time: '' });
  });

  it('treats a null field as missing', () => {
    expect(decodeDockerRecord('{"log":"a","stream":null,"time":null}')).toEqual({ log: 'a', stream: '', time: '' });
  });

  it('sets an empty stream label when the document has no stream', () => {
    const out = run('{"log":"a"}');
    expect(out.labels).toEqual({ stream: '' });
    expect(out.extracted).toMatchObject({ output: 'a', stream: '', timestamp: '' });
    expect(out.timestamp).toBe(BEFORE);
  });

  it('keeps the old timestamp but extracts the raw time when it does not parse', () => {
    const out = run('{"log":"log message\\n","stream":"stderr","time":"hi!"}');
    expect(out.timestamp).toBe(BEFORE);
    expect(out.extracted.timestamp).toBe('hi!');
    expect(out.line).toBe('log message\n');
  });

  it('honours zone offsets in time', () => {
    const out = run('{"log":"a","time":"2024-01-02T04:04:05+01:00"}');
    expect(out.timestamp).toBe(BigInt(Date.parse('2024-01-02T03:04:05Z')) * 1_000_000n);
  });

  it.each([
    ['text', "i'm not json!"],
    ['JSON without log', '{"msg":"test"}'],
    ['an empty log', '{"log":"","stream":"stdout"}'],
    ['a null log', '{"log":null,"stream":"stdout"}'],
    ['a number log', '{"log":5,"stream":"stdout"}'],
    ['a number stream', '{"log":"a","stream":1}'],
    ['an object time', '{"log":"a","time":{}}'],
    ['trailing garbage', '{"log":"a"} x'],
    ['a top-level array', '[{"log":"a"}]'],
    ['a top-level string', '"{\\"log\\":\\"a\\"}"'],
    ['the empty line', ''],
  ])('leaves the entry untouched for %s', (_what, line) => {
    const out = run(line, { job: 'x' });
    expect(out.line).toBe(line);
    expect(out.labels).toEqual({ job: 'x' });
    expect(out.extracted).toEqual({ job: 'x' });
    expect(out.timestamp).toBe(BEFORE);
  });

  it('accepts JSON whitespace before the object', () => {
    expect(run(' \n\t{"log":"a"}').line).toBe('a');
  });

  it('never throws and only changes what a valid record says (property)', () => {
    const record = fc.record({ log: fc.string(), stream: fc.string({ maxLength: 8 }), time: fc.string({ maxLength: 30 }) });
    fc.assert(
      fc.property(
        fc.oneof(
          record.map((r) => JSON.stringify(r)),
          fc.string(),
        ),
        (line) => {
          const out = run(line);
          const decoded = decodeDockerRecord(line);
          if (decoded === undefined || decoded.log === '') {
            expect(out.line).toBe(line);
            expect(out.labels).toEqual({});
          } else {
            expect(out.line).toBe(decoded.log);
            expect(out.labels).toEqual({ stream: decoded.stream });
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it('reads a lone surrogate escape in the log as U+FFFD, as Go decodes it', () => {
    expect(run('{"log":"a\\ud800b\\n","stream":"stdout","time":"2019-01-01T01:00:00.000000001Z"}').line).toBe('a\ufffdb\n');
  });
});
