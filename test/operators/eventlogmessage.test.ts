import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventLogMessage } from '../../operators/eventlogmessage.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);

describe('stage.eventlogmessage', () => {
  it('extracts one field per CRLF line of the default source', () => {
    const message = 'Key1: Value 1\r\nKey2: Value 2\r\nKey3: Value: 3';
    const { entries } = runConfig('stage.eventlogmessage {}', [entry(message, {}, { extracted: { message, test: 'existing value' } })]);
    expect(entries[0]!.extracted).toEqual({ message, test: 'existing value', Key1: 'Value 1', Key2: 'Value 2', Key3: 'Value: 3' });
  });

  it('sanitizes invalid keys with the legacy scheme', () => {
    const message = 'Key 1: Value 1\r\n0Key2: Value 2\r\nKey@3: Value 3\r\n: Value 4\r\nÜnïcode: 5';
    const { entries } = runConfig('stage.eventlogmessage {}', [entry('x', {}, { extracted: { message } })]);
    expect(entries[0]!.extracted).toEqual({ message, Key_1: 'Value 1', _Key2: 'Value 2', Key_3: 'Value 3', _: 'Value 4', _n_code: '5' });
  });

  it('drops invalid keys with drop_invalid_labels, keeping a valid title with an empty value', () => {
    const message = 'Network connection detected:\r\nTitle:\r\nKey 1: Value 1\r\nRuleName: Usermode';
    const { entries } = runConfig('stage.eventlogmessage { drop_invalid_labels = true }', [entry('x', {}, { extracted: { message } })]);
    expect(entries[0]!.extracted).toEqual({ message, Title: '', RuleName: 'Usermode' });
  });

  it('suffixes a key that collides with the source key itself', () => {
    const { entries } = runConfig('stage.eventlogmessage {}', [entry('x', {}, { extracted: { message: 'message: inner' } })]);
    expect(entries[0]!.extracted).toEqual({ message: 'message: inner', message_extracted: 'inner' });
  });

  it('overwrites existing keys with overwrite_existing', () => {
    const { entries } = runConfig('stage.eventlogmessage { overwrite_existing = true }', [
      entry('x', { test: 'label' }, { extracted: { message: 'test: new value' } }),
    ]);
    expect(entries[0]!.extracted).toEqual({ message: 'test: new value', test: 'new value' });
    expect(entries[0]!.labels).toEqual({ test: 'label' });
  });

  it('leaves the entry unchanged when the source is missing', () => {
    const { entries } = runConfig('stage.eventlogmessage {}', [entry('Key1: Value 1', {}, { extracted: { notmessage: 'Key1: Value 1' } })]);
    expect(entries[0]!.extracted).toEqual({ notmessage: 'Key1: Value 1' });
  });

  it('drops the whole entry, without counting it, when the source is null', async () => {
    const { entries, registry } = runConfig('stage.eventlogmessage {}', [
      entry('', {}, { extracted: { message: null } }),
      entry('kept', {}, { extracted: { message: true } }),
    ]);
    expect(entries.map((e) => e.extracted)).toEqual([{ message: true }]);
    expect((await registry.getSingleMetric('logs_process_dropped_lines_total')!.get()).values).toEqual([]);
  });

  it('rejects a source that is not a legacy label name, including a number', () => {
    expect(() => runConfig('stage.eventlogmessage {\n  source = "the message"\n}', [])).toThrow(
      'test.alloy:2:3: stage.eventlogmessage: invalid label name: the message',
    );
    expect(() => runConfig('stage.eventlogmessage {\n  source = 1\n}', [])).toThrow(
      'test.alloy:2:3: stage.eventlogmessage: invalid label name: 1',
    );
    expect(() => runConfig('stage.eventlogmessage {\n  source = ""\n}', [])).toThrow(
      'test.alloy:2:3: stage.eventlogmessage: invalid label name: ',
    );
    expect(() => eventLogMessage({ source: 'a.b' })).toThrow('stage.eventlogmessage: invalid label name: a.b');
  });

  it('never throws and only writes legacy-named keys or their suffixed forms (property)', () => {
    const piece = fc.constantFrom('\r\n', '\n', ':', ' ', 'Key', 'é', '0');
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, fc.string()), { maxLength: 12 }), fc.boolean(), (parts, drop) => {
        const message = parts.join('');
        const { entries } = runConfig(`stage.eventlogmessage { drop_invalid_labels = ${drop} }`, [
          entry('l', {}, { extracted: { message } }),
        ]);
        for (const key of Object.keys(entries[0]!.extracted)) expect(key).toMatch(/^[a-zA-Z_][a-zA-Z0-9_]*$/);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
