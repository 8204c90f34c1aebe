/**
 * Retry pacing as the reference's writer paces it: the first delay is drawn from
 * [min, 2·min), each later range starts at double the previous start, and no delay exceeds max.
 * `maxAttempts` counts attempts in total (the first included); 0 means no limit.
 */
export class Backoff {
  private attempts = 0;
  private nextMin: number;

  constructor(
    private readonly minMs: number,
    private readonly maxMs: number,
    private readonly maxAttempts: number,
    private readonly random: () => number = Math.random,
  ) {
    this.nextMin = minMs;
  }

  /** Records one attempt. */
  attempted(): void {
    this.attempts++;
  }

  /** Whether another attempt is allowed. */
  ongoing(): boolean {
    return this.maxAttempts <= 0 || this.attempts < this.maxAttempts;
  }

  /** The next delay in milliseconds. */
  nextDelay(): number {
    if (this.minMs >= this.maxMs) return this.minMs;
    const low = this.nextMin;
    const high = Math.min(low * 2, this.maxMs);
    this.nextMin = Math.min(low * 2, this.maxMs);
    return high > low ? low + Math.floor(this.random() * (high - low)) : low;
  }
}

/**
 * The delay a `Retry-After` header asks for, in milliseconds: delta-seconds or an HTTP date
 * (relative to `nowMs`). Undefined when absent or unreadable.
 */
export function retryAfterMs(header: string | null | undefined, nowMs: number): number | undefined {
  if (!header) return undefined;
  const text = header.trim();
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}
