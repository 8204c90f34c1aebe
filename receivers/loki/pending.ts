/**
 * The bound on what a push source holds while it reads bodies and waits for its receivers to take
 * entries over. Bytes are admitted as a request's body arrives and again when it grows by
 * decompression; they fit when they stay within the limit beside everything else pending, or
 * when the request is the only one holding anything (so a body larger than the bound is still
 * served, alone). A request refused admission is answered 429 before any of its entries is
 * forwarded, so the client's retry cannot duplicate them.
 */
export class PendingBytes {
  private pending = 0;

  constructor(private limit: number) {}

  /** A new limit (config update); what is already admitted stays admitted. */
  resize(limit: number): void {
    this.limit = limit;
  }

  /** Bytes admitted and not yet released. */
  get bytes(): number {
    return this.pending;
  }

  /** Whether a new request may start reading its body at all. */
  hasRoom(): boolean {
    return this.pending < this.limit;
  }

  /** Admits `bytes` more for a request that already holds `held`; false when they do not fit. */
  tryAdmit(bytes: number, held: number): boolean {
    if (this.pending !== held && this.pending + bytes > this.limit) return false;
    this.pending += bytes;
    return true;
  }

  /**
   * How large a request holding `held` may grow: up to `max` when it is alone, otherwise up to
   * what the limit leaves (never more than `max`).
   */
  roomFor(held: number, max: number): number {
    if (this.pending === held) return max;
    return Math.min(max, Math.max(0, this.limit - this.pending + held));
  }

  release(bytes: number): void {
    this.pending -= bytes;
  }
}
