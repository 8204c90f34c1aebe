import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostEvent } from '../../operators/hostevent.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);
const SECURITY_EVENT =
  'Credential Manager credentials were read.\r\n\r\nSubject:\r\n\tSecurity ID:\t\tS-1-5-21\r\n\tAccount Name:\t\tBob\r\n\r\nThis event occurs when a user reads credentials.';

describe('stage.hostevent', () => {
  it('extracts the description and the titled fields of the default source', () => {
    const { entries } = runConfig('stage.hostevent {}', [entry(SECURITY_EVENT, {}, { extracted: { message: SECURITY_EVENT } })]);
    expect(entries[0]!.extracted).toEqual({
      message: SECURITY_EVENT,
      Description: 'Credential Manager credentials were read.',
      Subject_SecurityID: 'S-1-5-21',
      Subject_AccountName: 'Bob',
    });
    expect(entries[0]!.line).toBe(SECURITY_EVENT);
    expect(entries[0]!.labels).toEqual({});
  });

  it('reads a custom source and leaves other extracted values alone', () => {
    const { entries } = runConfig('stage.hostevent { source = "the message" }', [
      entry('x', {}, { extracted: { 'the message': 'D\r\n\r\nK: v', other: 1 } }),
    ]);
    expect(entries[0]!.extracted).toEqual({ 'the message': 'D\r\n\r\nK: v', other: 1, Description: 'D', K: 'v' });
  });

  it('suffixes keys seeded from labels and overwrites them with overwrite_existing', () => {
    const input = () => [entry('x', { K: 'label' }, { extracted: { message: 'D\r\n\r\nK: v' } })];
    expect(runConfig('stage.hostevent {}', input()).entries[0]!.extracted).toEqual({
      K: 'label',
      K_extracted: 'v',
      message: 'D\r\n\r\nK: v',
      Description: 'D',
    });
    expect(runConfig('stage.hostevent { overwrite_existing = true }', input()).entries[0]!.extracted).toMatchObject({ K: 'v' });
  });

  it('leaves the entry unchanged when the source is missing', () => {
    const { entries } = runConfig('stage.hostevent {}', [entry('x', {}, { extracted: { notmessage: 'a: b' } })]);
    expect(entries[0]!.extracted).toEqual({ notmessage: 'a: b' });
  });

  it('reads a number source as text', () => {
    const { entries } = runConfig('stage.hostevent {}', [entry('x', {}, { extracted: { message: 12.5 } })]);
    expect(entries[0]!.extracted).toEqual({ message: 12.5, Description: '12.5' });
  });

  it('drops the whole entry, without counting it, when the source is not convertible to text', async () => {
    const { entries, registry } = runConfig('stage.hostevent {}', [
      entry('null', {}, { extracted: { message: null } }),
      entry('list', {}, { extracted: { message: ['a'] } }),
      entry('map', {}, { extracted: { message: { a: 1 } } }),
      entry('kept', {}, { extracted: { message: 'ok' } }),
    ]);
    expect(entries.map((e) => e.line)).toEqual(['kept']);
    const dropped = await registry.getSingleMetric('logs_process_dropped_lines_total')!.get();
    expect(dropped.values).toEqual([]);
  });

  it('rejects an empty source', () => {
    expect(() => runConfig('stage.hostevent {\n  source = ""\n}', [])).toThrow('test.alloy:2:3: stage.hostevent: invalid label name: ');
    expect(() => hostEvent({ source: '' })).toThrow('stage.hostevent: invalid label name: ');
  });

  it('rejects unknown attributes', () => {
    expect(() => runConfig('stage.hostevent { sauce = "x" }', [])).toThrow(
      'test.alloy:1:19: stage.hostevent: unrecognized attribute name "sauce"',
    );
  });

  it('never throws and keeps the line and labels (property)', () => {
    const piece = fc.constantFrom('\r\n', '\r\n\r\n', ':', ' ', '\t', 'Key', 'é', '');
    const source = fc.oneof(
      fc.array(fc.oneof(piece, fc.string()), { maxLength: 12 }).map((p) => p.join('')),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
    );
    fc.assert(
      fc.property(source, fc.boolean(), fc.boolean(), (message, drop, overwrite) => {
        const config = `stage.hostevent {\n  drop_invalid_labels = ${drop}\n  overwrite_existing = ${overwrite}\n}`;
        const { entries } = runConfig(config, [entry('line', { app: 'a' }, { extracted: { message } })]);
        expect(entries).toHaveLength(message === null ? 0 : 1);
        for (const out of entries) {
          expect(out.line).toBe('line');
          expect(out.labels).toEqual({ app: 'a' });
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
