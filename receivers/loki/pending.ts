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

/** Where the shared bound keeps what is admitted, and its limit. */
const PENDING = 0;
const LIMIT = 1;

/**
 * The same bound kept in shared memory, for a sharded run: the main thread admits the bodies it
 * reads and every shard thread the bytes it decodes them into, all against one limit, so the
 * threads together hold no more than one instance in place would. The counter and the limit are
 * 64-bit integers changed with atomic operations (a limit above 2 GiB stays exact); an admission
 * is a compare-and-exchange loop, so two threads admitting at once never pass the limit together.
 *
 * ```ts
 * const bound = new SharedPendingBytes(64 << 20); // on the main thread
 * worker.postMessage({ memory: bound.memory }); // shared, not copied
 * const same = new SharedPendingBytes(memory); // on the worker: the same counter
 * ```
 */
export class SharedPendingBytes extends PendingBytes {
  /** The counter and the limit; post it to another thread to share the bound with it. */
  readonly memory: SharedArrayBuffer;
  private readonly cells: BigInt64Array;

  /** A new bound of `limit` bytes, or the one kept in `memory` (another's `memory`). */
  constructor(limitOrMemory: number | SharedArrayBuffer) {
    super(0);
    this.memory = typeof limitOrMemory === 'number' ? new SharedArrayBuffer(2 * BigInt64Array.BYTES_PER_ELEMENT) : limitOrMemory;
    this.cells = new BigInt64Array(this.memory, 0, 2);
    if (typeof limitOrMemory === 'number') Atomics.store(this.cells, LIMIT, BigInt(limitOrMemory));
  }

  override resize(limit: number): void {
    Atomics.store(this.cells, LIMIT, BigInt(limit));
  }

  override get limit(): number {
    return Number(Atomics.load(this.cells, LIMIT));
  }

  override get bytes(): number {
    return Number(Atomics.load(this.cells, PENDING));
  }

  override hasRoom(): boolean {
    return Atomics.load(this.cells, PENDING) < Atomics.load(this.cells, LIMIT);
  }

  override tryAdmit(bytes: number, held: number): Admission {
    const max = Atomics.load(this.cells, LIMIT);
    const growth = BigInt(bytes);
    if (BigInt(held) + growth > max) return 'too_large';
    let seen = Atomics.load(this.cells, PENDING);
    for (;;) {
      if (seen + growth > max) return 'busy';
      // Another thread may have changed the counter since it was read: then try again on its value.
      const found = Atomics.compareExchange(this.cells, PENDING, seen, seen + growth);
      if (found === seen) return 'admitted';
      seen = found;
    }
  }

  override release(bytes: number): void {
    Atomics.sub(this.cells, PENDING, BigInt(bytes));
  }
}

/** What one request holds of a PendingBytes bound. */
export class PendingClaim {
  private heldBytes: number;

  /** A claim on `pending`, holding `held` bytes already admitted (a body handed over with its claim). */
  constructor(
    readonly pending: PendingBytes,
    held = 0,
  ) {
    this.heldBytes = held;
  }

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

  /**
   * Lets go of what the claim holds without giving it back: another claim on the same bound (a
   * shard's, for the body handed to it) holds it now and releases it. Returns how much that is.
   */
  handOver(): number {
    const held = this.heldBytes;
    this.heldBytes = 0;
    return held;
  }
}
