import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../../operators/limit/token-bucket.js';

const MS = 1_000_000n;
const S = 1_000_000_000n;

describe('the token bucket (golang.org/x/time/rate)', () => {
  it('starts full and lets burst entries through at once', () => {
    const bucket = new TokenBucket(1, 3);
    expect([bucket.allow(0n), bucket.allow(0n), bucket.allow(0n), bucket.allow(0n)]).toEqual([true, true, true, false]);
  });

  it('refills continuously, with fractional tokens', () => {
    const bucket = new TokenBucket(3, 1);
    expect(bucket.allow(0n)).toBe(true);
    expect(bucket.allow(300n * MS)).toBe(false);
    expect(bucket.allow(333_333_330n)).toBe(false);
    expect(bucket.allow(334n * MS)).toBe(true);
  });

  it('does not wait for a deficit worth less than a nanosecond, as the truncated wait is zero', () => {
    const bucket = new TokenBucket(3, 1);
    bucket.allow(0n);
    // 0.999999999 tokens: the missing 1e-9 token takes 0.33 ns, which truncates to no wait.
    expect(bucket.allow(333_333_333n)).toBe(true);
  });

  it('caps the refill at burst', () => {
    const bucket = new TokenBucket(10, 2);
    bucket.allow(0n);
    bucket.allow(0n);
    expect(bucket.allow(3600n * S)).toBe(true);
    expect(bucket.allow(3600n * S)).toBe(true);
    expect(bucket.allow(3600n * S)).toBe(false);
  });

  it('leaves the bucket untouched when it refuses', () => {
    const bucket = new TokenBucket(1, 1);
    bucket.allow(0n);
    for (let ms = 100n; ms < 1000n; ms += 100n) expect(bucket.allow(ms * MS)).toBe(false);
    expect(bucket.allow(S)).toBe(true);
  });

  it('refills nothing when the clock steps back', () => {
    const bucket = new TokenBucket(1, 1);
    expect(bucket.allow(10n * S)).toBe(true);
    expect(bucket.allow(5n * S)).toBe(false);
    expect(bucket.allow(11n * S)).toBe(true);
  });

  it('reserves on credit: each reservation is due one token period after the previous', () => {
    const bucket = new TokenBucket(2, 1);
    expect(bucket.reserve(0n)).toBe(0n);
    expect(bucket.reserve(0n)).toBe(500n * MS);
    expect(bucket.reserve(0n)).toBe(1000n * MS);
    expect(bucket.reserve(0n, 0n)).toBeUndefined();
  });

  it('treats a rate of the largest float64 as no limit', () => {
    const bucket = new TokenBucket(Number.MAX_VALUE, 1);
    for (let i = 0; i < 10; i++) expect(bucket.allow(0n)).toBe(true);
  });
});
