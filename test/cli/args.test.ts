import { describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from '../../cli/args.js';

describe('parseArgs', () => {
  it('collects every value of a repeatable flag in order, in both spellings', () => {
    const args = parseArgs(['run', '--stages', 'a.ts', 'cfg', '--stages=b.ts'], [], [], ['stages']);
    expect(args.positional).toEqual(['run', 'cfg']);
    expect(args.lists.get('stages')).toEqual(['a.ts', 'b.ts']);
  });

  it('gives an empty list for a repeatable flag that is not used', () => {
    expect(parseArgs(['x'], [], [], ['stages']).lists.get('stages')).toEqual([]);
  });

  it('keeps the last value of a plain value flag', () => {
    expect(parseArgs(['--port', '1', '--port', '2'], [], ['port']).flags.get('port')).toBe('2');
  });

  it('rejects a repeatable flag without a value', () => {
    expect(() => parseArgs(['--stages'], [], [], ['stages'])).toThrow(new UsageError('flag --stages needs a value'));
  });
});
