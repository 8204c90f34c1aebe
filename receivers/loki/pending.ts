/**
 * The bound on what a push source holds while it reads, decompresses and decodes bodies and waits
 * for its receivers to take entries over, in estimated bytes of memory. Every request's bytes are
 * admitted as they grow (body chunks as they arrive, decompressed chunks, decoded objects slice by
 * slice) and fit only while everything pending stays within the limit, the first request
 * included: a push that would not fit even alone is too large, one that does not fit beside the
 * others is asked to come back. A request refused admission is answered before any of its
 * entries is forwarded, so the client's retry cannot duplicate them.
 */
export class PendingBytes {
  private pending = 0;

  constructor(private max: number) {}

  /** A new limit (config update); what is already admitted stays admitted. */
  resize(limit: number): void {
    this.max = limit;
  }

  get limit(): number {
    return this.max;
  }

  /** Bytes admitted and not yet released. */
  get bytes(): number {
    return this.pending;
  }

  /** Whether a new request may start reading its body at all. */
  hasRoom(): boolean {
    return this.pending < this.max;
  }

  /**
   * Admits `bytes` more for a request that already holds `held`: `too_large` when the request
   * alone would pass the limit, `busy` when it would beside the others.
   */
  tryAdmit(bytes: number, held: number): Admission {
    if (held + bytes > this.max) return 'too_large';
    if (this.pending + bytes > this.max) return 'busy';
    this.pending += bytes;
    return 'admitted';
  }

  release(bytes: number): void {
    this.pending -= bytes;
  }
}

export type Admission = 'admitted' | 'busy' | 'too_large';

/** What one request holds of a PendingBytes bound. */
export class PendingClaim {
  private heldBytes = 0;

  constructor(private readonly pending: PendingBytes) {}

  get held(): number {
    return this.heldBytes;
  }

  /** Takes `bytes` more, if they fit. */
  take(bytes: number): Admission {
    const admission = this.pending.tryAdmit(bytes, this.heldBytes);
    if (admission === 'admitted') this.heldBytes += bytes;
    return admission;
  }

  /** Gives back all but `bytes` (what is still alive once the body is decoded). */
  shrinkTo(bytes: number): void {
    if (bytes >= this.heldBytes) return;
    this.pending.release(this.heldBytes - bytes);
    this.heldBytes = bytes;
  }

  release(): void {
    this.pending.release(this.heldBytes);
    this.heldBytes = 0;
  }
}
