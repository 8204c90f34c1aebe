/**
 * One endpoint's bounded queue and its sender.
 *
 * `enqueue` resolves as soon as the entries are in the queue, which is the writer's
 * acknowledgement; while the queue (entries waiting plus the batch in flight) is at `capacity`,
 * it waits, in arrival order, so a slow or failing endpoint slows every sender upstream instead
 * of growing memory. A single send larger than the capacity is admitted when the queue is empty.
 *
 * The sender sends one batch at a time, so each stream's entries arrive in order. A batch holds
 * one tenant's entries, up to `batch_size` bytes of lines; it goes out when that much is queued or
 * when its oldest entry has waited `batch_wait`. A failed attempt is retried on a network error,
 * a 5xx, or a 429 (unless `retry_on_http_429` is false), with the reference's backoff, or after
 * the `Retry-After` the endpoint asked for (kept within the backoff bounds); other statuses and an
 * exhausted retry budget drop the batch, counted by reason.
 *
 * Stopping sends everything queued without waiting for batches to fill, for at most
 * `drain_timeout`; what is still undelivered then is counted as dropped with reason `shutdown`
 * and logged.
 *
 * With a write-ahead log (`wal`), `enqueue` resolves once the entries are written there, waiting
 * while the log is at its `max_size` instead of the memory capacity; the sender reads the log
 * back into a window of at most `capacity` bytes, and records each batch it delivers or gives up.
 * At the drain deadline nothing is dropped: what is undelivered stays in the log for the next
 * start. A drain takes in the appends still being written when it began (a source that completes
 * right after its last batch stops the writer while that batch is being written). A queue replaced by a config update stops at once, letting a request under way finish,
 * and its successor, sharing the log, sends what it had not delivered.
 */
import type { SchedulerLike } from 'rxjs';
import { stopwatch, type Clock } from '../../core/clock.js';
import type { Entry, Labels } from '../../core/entry.js';
import type { Log } from '../../lib/log.js';
import { Backoff, backoffClockOn, retryAfterMs, type BackoffClock } from '../../lib/backoff.js';
import { redactText } from '../../lib/redact.js';
import { encodeBatch, entryBytes, TenantQueue, tenantOf, type QueuedEntry } from './batch.js';
import type { EndpointConfig } from './endpoint-config.js';
import type { EndpointWal } from './endpoint-wal.js';
import type { DropReason, WriteMetrics } from './metrics.js';
import type { PushTransport } from './transport.js';

/** How long the sender waits before reading the write-ahead log again after a read failed. */
const WAL_RETRY_MS = 1000;

export interface EndpointQueueOptions {
  readonly config: EndpointConfig;
  readonly componentId: string;
  /** Read per batch, so an update of external_labels applies to the next batch. */
  readonly externalLabels: () => Labels;
  readonly clock: Clock;
  readonly metrics: WriteMetrics;
  readonly transport: PushTransport;
  readonly log: Log;
  readonly userAgent: string;
  /** Jitter source for the backoff (tests pin it). */
  readonly random?: () => number;
  /** Sending starts once this settles: the drain of the queue this one replaces. */
  readonly after?: Promise<void>;
  /** The endpoint's write-ahead log, when it keeps one. */
  readonly wal?: EndpointWal;
}

interface Queued extends QueuedEntry {
  /** Scheduler time (ms) when it entered the queue; set then. */
  at: number;
}

interface Waiter {
  readonly items: Queued[];
  readonly bytes: number;
  readonly resolve: () => void;
}

export class EndpointQueue {
  private readonly items = new TenantQueue<Queued>();
  /** Bytes of entries waiting in `items`. */
  private queuedBytes = 0;
  /** Bytes waiting plus the batch in flight: what the capacity bounds. */
  private heldBytes = 0;
  private waiters: Waiter[] = [];
  private wakeUp: (() => void) | undefined;
  private state: 'running' | 'draining' | 'stopped' = 'running';
  private deadlineHit = false;
  /** Stopping so that another queue on the same write-ahead log takes over. */
  private handingOver = false;
  /**
   * Appends to the write-ahead log not finished yet. A drain waits for them: their senders are
   * answered once they are written, after a stop that began while they were under way.
   */
  private readonly appending = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private readonly loop: Promise<void>;
  private readonly scheduler: SchedulerLike;
  private readonly backoffClock: BackoffClock;
  private readonly labels: { component_id: string; host: string };

  constructor(private readonly options: EndpointQueueOptions) {
    this.scheduler = options.clock.scheduler;
    this.backoffClock = backoffClockOn(this.scheduler, options.random);
    this.labels = { component_id: options.componentId, host: options.config.host };
    this.loop = this.run();
  }

  get config(): EndpointConfig {
    return this.options.config;
  }

  /** Bytes queued or in flight. */
  held(): number {
    return this.heldBytes;
  }

  /** Queues entries; resolves once they are in the queue (waiting while it is full). */
  enqueue(entries: readonly Entry[]): Promise<void> {
    if (this.state !== 'running') return Promise.reject(new Error(`logs.write endpoint ${this.options.config.url} is stopping`));
    const tenantDefault = this.options.config.tenantId;
    // Built as queue items at once (their time is set when they enter), not copied into them later.
    const items: Queued[] = new Array(entries.length);
    let bytes = 0;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const size = entryBytes(entry);
      items[i] = { entry, tenant: tenantOf(entry, tenantDefault), bytes: size, at: 0, seq: undefined };
      bytes += size;
    }
    if (this.options.wal) return this.enqueueDurably(this.options.wal, items);
    if (this.waiters.length === 0 && this.fits(bytes)) {
      this.push(items, bytes);
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.waiters.push({ items, bytes, resolve }));
  }

  /**
   * Delivers what is queued (ignoring batch_wait) for at most drain_timeout, then counts what is
   * left as dropped. Resolves when the sender has finished. With a write-ahead log, what is left
   * stays there instead; `handOver` (another queue on the same log takes over) stops at once.
   */
  async stop(handOver = false): Promise<void> {
    if (this.state !== 'running') return this.loop;
    this.state = 'draining';
    const wal = this.options.wal;
    // Appends waiting for room in the log were promised nothing yet either: keep them too, unless
    // a successor goes on with the log (and its bound).
    if (!handOver) wal?.lift();
    // Senders still waiting were promised nothing yet, but their entries are accepted upstream:
    // take them in so they are delivered or counted.
    for (const waiter of this.waiters.splice(0)) {
      this.push(waiter.items, waiter.bytes);
      waiter.resolve();
    }
    this.handingOver = wal !== undefined && handOver;
    const drainMs = this.handingOver ? 0 : this.options.config.drainTimeoutMs;
    const deadline = this.scheduler.schedule(() => {
      this.deadlineHit = true;
      this.abort.abort(new Error('drain_timeout reached'));
      this.wake();
    }, drainMs);
    this.wake();
    try {
      await this.loop;
      // Past the deadline, appends still being written stay in the log for the next start; the
      // log is closed after this resolves, so they must be done. A successor's appends may wait
      // for room that only the successor frees: it goes on with them.
      if (!this.handingOver) await Promise.all(this.appending);
    } finally {
      deadline.unsubscribe();
      this.state = 'stopped';
      this.options.metrics.queuedBytes.remove(this.labels);
      this.options.metrics.walBytes.remove(this.labels);
    }
  }

  private fits(bytes: number): boolean {
    return this.heldBytes === 0 || this.heldBytes + bytes <= this.options.config.capacityBytes;
  }

  private push(items: readonly Queued[], bytes: number): void {
    const at = this.scheduler.now();
    for (const item of items) {
      item.at = at;
      this.items.push(item);
    }
    this.queuedBytes += bytes;
    this.heldBytes += bytes;
    this.options.metrics.queuedBytes.set(this.labels, this.heldBytes);
    this.wake();
  }

  private admitWaiters(): void {
    while (this.waiters.length > 0 && this.fits(this.waiters[0]!.bytes)) {
      const waiter = this.waiters.shift()!;
      this.push(waiter.items, waiter.bytes);
      waiter.resolve();
    }
  }

  private wake(): void {
    const wakeUp = this.wakeUp;
    this.wakeUp = undefined;
    wakeUp?.();
  }

  /** Resolves on the next wake-up, or after `ms` when given. */
  private waitForWake(ms?: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = ms === undefined ? undefined : this.scheduler.schedule(() => this.wake(), ms);
      this.wakeUp = () => {
        timer?.unsubscribe();
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    await this.options.after?.catch(() => {});
    const wal = this.options.wal;
    if (wal) {
      try {
        await wal.ready();
      } catch {
        return; // Nothing was accepted, since every append failed too.
      }
      // Start at the oldest record not done: a queue this one replaced may have stopped mid-batch.
      wal.rewind();
    }
    const { batchWaitMs, batchSizeBytes, capacityBytes } = this.options.config;
    for (;;) {
      if (this.deadlineHit) {
        if (wal) this.keepRemaining(wal);
        else this.dropRemaining();
        return;
      }
      if (wal && this.heldBytes < capacityBytes && wal.hasUnread()) {
        await this.refill(wal, capacityBytes - this.heldBytes);
        continue;
      }
      if (this.items.length === 0) {
        if (this.state !== 'running' && this.appending.size === 0) return;
        await this.waitForWake();
        continue;
      }
      if (this.state === 'running' && this.queuedBytes < batchSizeBytes && !wal?.hasUnread()) {
        const due = this.items.peek()!.at + batchWaitMs;
        const now = this.scheduler.now();
        if (now < due) {
          await this.waitForWake(due - now);
          continue;
        }
      }
      const batch = this.takeBatch(batchSizeBytes);
      const bytes = batch.reduce((sum, item) => sum + item.bytes, 0);
      let settled = true;
      try {
        settled = await this.deliver(batch, bytes);
      } catch (err) {
        this.options.log('error', 'sending batch failed unexpectedly', { error: (err as Error).message });
        this.drop(batch, bytes, 'ingester_error');
      }
      if (wal && settled) await this.settle(wal, batch);
      this.heldBytes -= bytes;
      this.options.metrics.queuedBytes.set(this.labels, this.heldBytes);
      this.admitWaiters();
    }
  }

  /** The oldest entry's tenant's entries, in order, up to batch_size bytes (at least one). */
  private takeBatch(batchSizeBytes: number): Queued[] {
    // Other tenants' entries keep their places, ahead of everything queued after them.
    const taken = this.items.takeBatch(batchSizeBytes);
    for (const item of taken) this.queuedBytes -= item.bytes;
    return taken;
  }

  /** Sends one batch; true once it is delivered or given up, false when the drain deadline cut it off. */
  private async deliver(batch: readonly Queued[], bytes: number): Promise<boolean> {
    const { config, metrics, log } = this.options;
    const tenant = batch[0]!.tenant;
    const encoded = encodeBatch(batch, this.options.externalLabels());
    metrics.encodedBytes.inc(this.labels, encoded.encodedBytes);
    const headers: Record<string, string> = {
      ...config.headers,
      'Content-Type': 'application/x-protobuf',
      'User-Agent': this.options.userAgent,
    };
    if (config.authorization) headers.Authorization = config.authorization;
    if (tenant !== '') headers['X-Scope-OrgID'] = tenant;
    const backoff = new Backoff(
      { minMs: config.minBackoffMs, maxMs: config.maxBackoffMs, maxRetries: config.maxBackoffRetries, floorRisesToMax: true },
      this.backoffClock,
    );
    let status = 0;
    let message = '';
    for (;;) {
      if (this.deadlineHit) return this.cutOff(batch, bytes);
      const elapsed = stopwatch(this.options.clock);
      const result = await this.attempt({ url: config.url, headers, body: encoded.body });
      metrics.requestDuration.observe({ ...this.labels, status_code: String(result.status) }, elapsed());
      if (result.status >= 200 && result.status < 300) {
        metrics.sentBytes.inc(this.labels, bytes);
        metrics.sentEntries.inc(this.labels, batch.length);
        return true;
      }
      status = result.status;
      // An endpoint (or a proxy before it) may quote the request back, credentials included.
      message = redactText(result.message, config.secrets);
      const retryable = status < 0 || Math.floor(status / 100) === 5 || (status === 429 && config.retryOnHttp429);
      if (!retryable || this.deadlineHit) break;
      let delay = backoff.nextDelay();
      if (!backoff.ongoing()) break;
      const asked = retryAfterMs(result.retryAfter, Number(this.options.clock.nowNs() / 1_000_000n));
      if (asked !== undefined) delay = Math.min(config.maxBackoffMs, Math.max(config.minBackoffMs, asked));
      log('warn', 'error sending batch, will retry', { host: config.host, status, tenant, error: message, retry_in_ms: delay });
      metrics.batchRetries.inc({ ...this.labels, tenant });
      await this.backoffClock.sleep(delay, this.abort.signal);
    }
    if (this.deadlineHit) return this.cutOff(batch, bytes);
    log('error', 'final error sending batch', { host: config.host, status, tenant, error: message, entries: batch.length });
    this.drop(batch, bytes, status === 429 ? 'rate_limited' : 'ingester_error');
    return true;
  }

  /** A batch the drain deadline cut off: dropped, unless the write-ahead log keeps it. */
  private cutOff(batch: readonly Queued[], bytes: number): false {
    if (!this.options.wal) this.drop(batch, bytes, 'shutdown');
    return false;
  }

  /** With a write-ahead log: accepted once written there; the sender reads it back. */
  private enqueueDurably(wal: EndpointWal, items: readonly QueuedEntry[]): Promise<void> {
    const appended = wal.append(items).then(() => this.options.metrics.walBytes.set(this.labels, wal.bytes));
    const settled = appended.then(
      () => {},
      () => {},
    );
    this.appending.add(settled);
    void settled.then(() => {
      this.appending.delete(settled);
      this.wake();
    });
    return appended;
  }

  /** Reads up to `room` bytes of entries back from the write-ahead log into the queue. */
  private async refill(wal: EndpointWal, room: number): Promise<void> {
    let items: QueuedEntry[];
    try {
      items = await wal.read(room);
    } catch (err) {
      const error = (err as Error).message;
      this.options.log('error', 'reading the write-ahead log failed, retrying', { host: this.options.config.host, error });
      await this.waitForWake(WAL_RETRY_MS);
      return;
    }
    const bytes = items.reduce((sum, item) => sum + item.bytes, 0);
    this.push(
      items.map((item) => ({ entry: item.entry, tenant: item.tenant, bytes: item.bytes, at: 0, seq: item.seq })),
      bytes,
    );
    this.options.metrics.walBytes.set(this.labels, wal.bytes);
  }

  /** Records a settled batch in the write-ahead log, which deletes segments that are all done. */
  private async settle(wal: EndpointWal, batch: readonly Queued[]): Promise<void> {
    try {
      await wal.done(batch);
    } catch (err) {
      // The entries are sent again after a restart: a repeat, not a loss.
      const error = (err as Error).message;
      this.options.log('error', 'recording delivery in the write-ahead log failed', { host: this.options.config.host, error });
    }
    this.options.metrics.walBytes.set(this.labels, wal.bytes);
  }

  /** One request with remote_timeout; cut short when the drain deadline passes. */
  private attempt(request: { url: string; headers: Record<string, string>; body: Buffer }) {
    const controller = new AbortController();
    // A request under way when a successor takes the log over finishes (within remote_timeout):
    // cut off, a batch the endpoint stored would be sent again by the successor.
    const onAbort = () => {
      if (!this.handingOver) controller.abort(this.abort.signal.reason);
    };
    this.abort.signal.addEventListener('abort', onAbort, { once: true });
    const timer = this.scheduler.schedule(() => controller.abort(new Error('remote_timeout reached')), this.options.config.remoteTimeoutMs);
    return this.options.transport(request, controller.signal).finally(() => {
      timer.unsubscribe();
      this.abort.signal.removeEventListener('abort', onAbort);
    });
  }

  private drop(batch: readonly Queued[], bytes: number, reason: DropReason): void {
    const byTenant = new Map<string, { entries: number; bytes: number }>();
    for (const item of batch) {
      const sum = byTenant.get(item.tenant) ?? { entries: 0, bytes: 0 };
      sum.entries++;
      sum.bytes += item.bytes;
      byTenant.set(item.tenant, sum);
    }
    for (const [tenant, sum] of byTenant) {
      this.options.metrics.droppedEntries.inc({ ...this.labels, reason, tenant }, sum.entries);
      this.options.metrics.droppedBytes.inc({ ...this.labels, reason, tenant }, sum.bytes);
    }
    if (reason === 'shutdown') {
      this.options.log('error', 'dropped entries not delivered before drain_timeout', {
        host: this.options.config.host,
        entries: batch.length,
        bytes,
      });
    }
  }

  /** At the drain deadline with a write-ahead log: what is undelivered stays there for the next start. */
  private keepRemaining(wal: EndpointWal): void {
    const rest = this.items.takeAll();
    const bytes = rest.reduce((sum, item) => sum + item.bytes, 0);
    this.queuedBytes -= bytes;
    this.heldBytes -= bytes;
    const records = wal.undone();
    if (records > 0 && !this.handingOver) {
      this.options.log('warn', 'entries not delivered before drain_timeout stay in the write-ahead log for the next start', {
        host: this.options.config.host,
        records,
      });
    }
  }

  /** At the drain deadline: everything still queued is given up and counted. */
  private dropRemaining(): void {
    const rest = this.items.takeAll();
    if (rest.length === 0) return;
    const bytes = rest.reduce((sum, item) => sum + item.bytes, 0);
    this.queuedBytes -= bytes;
    this.heldBytes -= bytes;
    this.drop(rest, bytes, 'shutdown');
  }
}
