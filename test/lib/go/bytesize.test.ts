import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { ByteSizeError, formatBase2Bytes, parseBase2Bytes } from '../../../lib/go/bytesize.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);

function errorOf(text: string): string {
  try {
    parseBase2Bytes(text);
  } catch (err) {
    expect(err).toBeInstanceOf(ByteSizeError);
    return (err as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

describe('parseBase2Bytes', () => {
  const accepted: Array<[string, bigint]> = [
    ['0', 0n],
    ['-0', 0n],
    ['0B', 0n],
    ['10B', 10n],
    ['1KB', 1024n],
    ['1KiB', 1024n],
    ['1MB1KB25B', 1049625n],
    ['1MiB1KiB25B', 1049625n],
    ['1.5MB', 1572864n],
    ['1.5MiB', 1572864n],
    ['0.5KiB', 512n],
    ['.5KiB', 512n],
    ['1.KiB', 1024n],
    ['1KiB2B', 1026n],
    ['1.1KiB', 1126n],
    ['-1KiB', -1024n],
    ['+2GiB', 2147483648n],
    ['1TB', 1099511627776n],
    ['1PiB', 1125899906842624n],
    ['7EiB', 7n << 60n],
    ['-8EiB', -(1n << 63n)],
    ['1MiB512KiB', 1572864n],
    ['1000B', 1000n],
    ['8KB', 8192n],
  ];
  it.each(accepted)('reads %j as %s bytes', (text, bytes) => {
    expect(parseBase2Bytes(text)).toBe(bytes);
  });

  const rejected: Array<[string, string]> = [
    ['', 'units: invalid '],
    ['-', 'units: invalid -'],
    ['10', 'units: unknown unit  in 10'],
    ['1.5', 'units: unknown unit  in 1.5'],
    ['10b', 'units: unknown unit b in 10b'],
    ['1kB', 'units: unknown unit kB in 1kB'],
    ['1kiB', 'units: unknown unit kiB in 1kiB'],
    ['1 KiB', 'units: unknown unit  KiB in 1 KiB'],
    ['1KiB1KB', 'units: unknown unit KiB in 1KiB1KB'],
    ['B', 'units: invalid B'],
    ['.B', 'units: invalid .B'],
    [' 1B', 'units: invalid  1B'],
    ['1B ', 'units: unknown unit B  in 1B '],
    // An overflow in the KiB-family attempt is reported as the legacy attempt's failure.
    ['8EiB', 'units: unknown unit EiB in 8EiB'],
    ['4EiB4EiB', 'units: unknown unit EiB in 4EiB4EiB'],
    ['-9EiB', 'units: unknown unit EiB in -9EiB'],
    ['8EB', 'units: overflow parsing unit'],
    ['-9EB', 'units: overflow parsing unit'],
    ['9999999999999999999B', 'units: invalid 9999999999999999999B'],
  ];
  it.each(rejected)('rejects %j with the library message', (text, message) => {
    expect(errorOf(text)).toBe(message);
  });

  it('sums generated sequences of whole-number parts', () => {
    const unit = fc.constantFrom<[string, bigint]>(['B', 1n], ['KiB', 1024n], ['MiB', 1024n ** 2n], ['GiB', 1024n ** 3n]);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 4096 }), unit), { minLength: 1, maxLength: 5 }), (parts) => {
        const text = parts.map(([n, [u]]) => `${n}${u}`).join('');
        const expected = parts.reduce((sum, [n, [, size]]) => sum + BigInt(n) * size, 0n);
        expect(parseBase2Bytes(text)).toBe(expected);
      }),
      { numRuns },
    );
  });
});

describe('formatBase2Bytes', () => {
  it('writes components from largest to smallest', () => {
    expect(formatBase2Bytes(0n)).toBe('0B');
    expect(formatBase2Bytes(1025n)).toBe('1KiB1B');
    expect(formatBase2Bytes(1048577n)).toBe('1MiB1B');
    expect(formatBase2Bytes(1048576n)).toBe('1MiB');
    expect(formatBase2Bytes(-1025n)).toBe('-1KiB1B');
  });

  it('prints text that parses back to the same size', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 53n) - 1n }), (bytes) => {
        expect(parseBase2Bytes(formatBase2Bytes(bytes))).toBe(bytes);
      }),
      { numRuns },
    );
  });
});
