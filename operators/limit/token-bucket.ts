/**
 * golang.org/x/time/rate's `Limiter` for events of one token, the bucket `stage.limit` throttles
 * with: fractional tokens, refill from Go's `Duration.Seconds()` of the elapsed time, waits
 * truncated to whole nanoseconds.
 */

const NS_PER_SECOND = 1_000_000_000n;
/** Go's `rate.InfDuration`, the largest `time.Duration`. */
const INF_DURATION = (1n << 63n) - 1n;
const INT64_MAX_AS_FLOAT = 2 ** 63;

/**
 * golang.org/x/time/rate's limiter for events of one token, on bigint nanosecond time. Starts
 * full. `allow` is `Limiter.Allow`; `reserve` is the reservation `Limiter.Wait` makes.
 *
 * @example
 * const bucket = new TokenBucket(2, 1);
 * bucket.allow(0n); // true
 * bucket.reserve(0n); // 500_000_000n: the next token is due half a second later
 */
export class TokenBucket {
  private tokens: number;
  /** When tokens were last taken; undefined stands for Go's zero time (the bucket is full). */
  private last: bigint | undefined;
  private readonly unlimited: boolean;

  constructor(
    readonly rate: number,
    readonly burst: number,
  ) {
    this.tokens = burst;
    this.unlimited = rate >= Number.MAX_VALUE;
  }

  /** Takes a token if one is there at `nowNs`; never waits. */
  allow(nowNs: bigint): boolean {
    if (this.unlimited) return true;
    const tokens = this.advance(nowNs) - 1;
    // The same decision as reserve(nowNs, 0n) without bigint arithmetic on the hot path: a wait
    // truncates to zero nanoseconds exactly when it is under one.
    if (tokens < 0 && (-tokens / this.rate) * 1e9 >= 1) return false;
    this.last = nowNs;
    this.tokens = tokens;
    return true;
  }

  /**
   * Takes a token, possibly on credit: returns when it may be used (`nowNs` when no wait is
   * needed), or undefined — leaving the bucket as it was — when that is more than `maxWaitNs` away.
   */
  reserve(nowNs: bigint, maxWaitNs: bigint = INF_DURATION): bigint | undefined {
    if (this.unlimited) return nowNs;
    const tokens = this.advance(nowNs) - 1;
    const waitNs = tokens < 0 ? durationFromTokens(-tokens, this.rate) : 0n;
    if (this.burst < 1 || waitNs > maxWaitNs) return undefined;
    this.last = nowNs;
    this.tokens = tokens;
    return nowNs + waitNs;
  }

  /** The tokens there would be at `nowNs`. */
  private advance(nowNs: bigint): number {
    // From Go's zero time the elapsed duration saturates, so the refill always fills the bucket.
    if (this.last === undefined) return this.burst;
    const last = nowNs < this.last ? nowNs : this.last;
    const tokens = this.tokens + goSeconds(nowNs - last) * this.rate;
    return tokens > this.burst ? this.burst : tokens;
  }
}

const MAX_SAFE_NS = BigInt(Number.MAX_SAFE_INTEGER);

/** Go's `Duration.Seconds()`: whole seconds and the nanosecond remainder converted separately. */
function goSeconds(ns: bigint): number {
  if (ns <= MAX_SAFE_NS) {
    // Below 2^53 the float split is exact and much cheaper than bigint division.
    const n = Number(ns);
    const seconds = Math.floor(n / 1e9);
    return seconds + (n - seconds * 1e9) / 1e9;
  }
  return Number(ns / NS_PER_SECOND) + Number(ns % NS_PER_SECOND) / 1e9;
}

/** x/time/rate's `durationFromTokens`: truncated to whole nanoseconds, capped at InfDuration. */
function durationFromTokens(tokens: number, rate: number): bigint {
  const ns = (tokens / rate) * 1e9;
  if (ns > INT64_MAX_AS_FLOAT) return INF_DURATION;
  return BigInt(Math.trunc(ns));
}
