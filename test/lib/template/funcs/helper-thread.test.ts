import { describe, expect, it } from 'vitest';
import { derivePasswordKey, generateSlowKey } from '../../../../lib/template/funcs/helper-thread.js';
import { parseTemplate, referenceFuncs } from '../../../../lib/template/index.js';

// The limits here are far above what the work takes, so they never decide a result.
const GENEROUS_MS = 120_000;

describe('slow crypto on the helper thread', () => {
  it('derives the same scrypt key as in place', () => {
    const password = new TextEncoder().encode('password');
    const salt = new TextEncoder().encode('com.lyndir.masterpassword\0\0\0\x04user');
    expect(derivePasswordKey(password, salt, GENEROUS_MS)).toEqual(derivePasswordKey(password, salt, Number.POSITIVE_INFINITY));
  });

  it('makes a key of the kind asked for', () => {
    const key = generateSlowKey('rsa-2048', GENEROUS_MS);
    expect(key?.asymmetricKeyType).toBe('rsa');
    expect(key?.asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  it('gives up at once with no time to wait, and serves the next call with a fresh helper', () => {
    expect(generateSlowKey('rsa-4096', 0)).toBeUndefined();
    expect(generateSlowKey('rsa-2048', GENEROUS_MS)?.asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  it('gives a timed render the results sprig documents', () => {
    const t = parseTemplate('{{ derivePassword 1 "long" "password" "user" "example.com" }}', {
      funcs: referenceFuncs,
      budget: { maxDuration: GENEROUS_MS },
    });
    expect(t.execute({})).toBe('ZedaFaxcZaso9*');
  });
});
