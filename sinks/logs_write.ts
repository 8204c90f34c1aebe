/**
 * logs.write — sends log entries to Loki-compatible push endpoints as snappy-compressed protobuf,
 * in batches, retrying with backoff. Exports `receiver`.
 *
 * Reference behaviour kept: one queue and sender per `endpoint` block, each getting every entry;
 * `external_labels` are added under the entry's own labels; an entry's `__tenant_id__` label
 * (set by stage.tenant) picks the `X-Scope-OrgID` of its batch, else the endpoint's `tenant_id`
 * does, and the label itself is never sent; batching by `batch_size`/`batch_wait`; retries on
 * network errors, 5xx and (unless disabled) 429, `max_backoff_retries` attempts in total; the
 * metric families of the reference's writer under the `logs_write_` prefix.
 *
 * Added here: the receiver's `send` resolves when the entries are queued at every endpoint and
 * waits while an endpoint's `queue_config.capacity` is reached, so a slow endpoint pushes back on
 * the pipeline; a `Retry-After` answer sets the next delay; stopping drains the queues for up to
 * `queue_config.drain_timeout` and counts what is left as dropped (reason `shutdown`).
 *
 * Without a `wal` block the queues live in memory: an acknowledged entry is lost if the process
 * dies before delivering it. With `wal { enabled = true, dir = … }` each endpoint keeps a
 * write-ahead log in its own subdirectory: `send` resolves once the entries are written there
 * (flushed to the device with `fsync = "always"`, the default), waits while the log holds
 * `max_size`, and what is not delivered at a crash or at the drain deadline is sent after the next
 * start. At least once: a batch in flight at a crash may arrive twice; a reload that changes an
 * endpoint keeps its log and position and repeats nothing. While the log's disk is full, `send`
 * fails with a `RetryLaterError` (a push source answers 429) and succeeds again by itself once a
 * write does. Records that cannot be read back are counted in `logs_write_wal_lost_entries_total`.
 * The `wal` block cannot change while the component runs.
 */
import type { Block } from '../lib/config/ast.js';
import { ConfigError, ConfigErrors } from '../lib/config/errors.js';
import { nestedBlocks } from '../lib/loki/config.js';
import type { Entry, Labels } from '../core/entry.js';
import { cloneEntry } from '../core/entry.js';
import { logsReceiverCapsule, type LogsReceiver } from '../core/receiver.js';
import { defineComponent, healthy, unhealthy, type ComponentArgs, type ComponentContext, type Health } from '../core/runtime/component.js';
import { t } from '../core/schema.js';
import { endpointBlockSpec, resolveEndpoints, type EndpointConfig } from './loki/endpoint_config.js';
import { EndpointQueue } from './loki/endpoint_queue.js';
import { EndpointWal, type WalLossReason } from './loki/endpoint_wal.js';
import { writeMetrics, type WriteMetrics } from './loki/metrics.js';
import { httpTransport } from './loki/http_transport.js';
import type { PushTransport } from './loki/transport.js';
import type { OpenFile } from '../lib/wal/segment_log.js';
import { endpointWalDir, resolveWal, walBlockSpec, type WalConfig } from './loki/wal_config.js';

const USER_AGENT = 'Rivulet/0.1.0';

export const logsWriteComponent = defineComponent({
  name: 'logs.write',
  doc: 'Sends log entries to Loki-compatible push endpoints in batches, with retries and backpressure.',
  example: `logs.write "loki" {
  endpoint {
    url = "http://localhost:3100/loki/api/v1/push"
  }
  external_labels = { cluster = "dev" }
}`,
  exportNames: ['receiver'],
  fields: {
    external_labels: { kind: t.map(t.string), default: {}, doc: 'Labels added to every stream sent; an entry’s own labels win.' },
  },
  blocks: { endpoint: endpointBlockSpec, wal: walBlockSpec },
  build(args, ctx) {
    return new LogsWrite(args, ctx);
  },
});

interface Settings {
  readonly endpoints: readonly EndpointConfig[];
  readonly externalLabels: Labels;
  readonly wal: WalConfig | undefined;
}

function settingsOf(args: ComponentArgs): Settings {
  try {
    const endpoints = resolveEndpoints(args.values.endpoint as Record<string, unknown>[], args.block as Block, args.path);
    const walBlock = nestedBlocks(args.block as Block, 'wal')[0];
    const wal = resolveWal(args.values.wal as Record<string, unknown> | undefined, walBlock, args.path);
    if (wal) {
      const dirs = endpoints.map((e) => endpointWalDir(wal, e));
      const shared = dirs.find((dir, i) => dirs.indexOf(dir) !== i);
      if (shared !== undefined)
        throw new ConfigError(`two endpoints would share the write-ahead log ${shared}; give them distinct names`, walBlock?.pos, [
          ...args.path,
          'wal',
        ]);
    }
    return { endpoints, externalLabels: args.values.external_labels as Labels, wal };
  } catch (err) {
    if (err instanceof ConfigErrors || err instanceof ConfigError) throw err;
    throw new ConfigError((err as Error).message, args.block.pos, args.path);
  }
}

/** Options for tests: another transport than the HTTP client, a fixed backoff jitter, a disk that fills up. */
export interface LogsWriteTestHooks {
  readonly transport?: PushTransport;
  readonly random?: () => number;
  readonly openFile?: OpenFile;
}

export class LogsWrite {
  readonly exports;
  private settings: Settings;
  private queues: EndpointQueue[];
  /** Write-ahead logs by directory, shared by an endpoint's successive queues. */
  private wals = new Map<string, EndpointWal>();
  private walFailure: string | undefined;
  private readonly metrics: WriteMetrics;
  private stopped = false;

  constructor(
    args: ComponentArgs,
    private readonly ctx: ComponentContext,
    private readonly hooks: LogsWriteTestHooks = {},
  ) {
    this.settings = settingsOf(args);
    this.metrics = writeMetrics(ctx.registry);
    this.queues = this.settings.endpoints.map((config) => this.newQueue(config));
    const receiver: LogsReceiver = { send: (entries) => this.send(entries) };
    this.exports = { receiver: logsReceiverCapsule(receiver) };
  }

  health(): Health {
    return this.walFailure === undefined ? healthy() : unhealthy(this.walFailure);
  }

  update(args: ComponentArgs): void {
    const next = settingsOf(args);
    const previous = this.settings;
    if (JSON.stringify(previous.wal) !== JSON.stringify(next.wal)) {
      const where = nestedBlocks(args.block as Block, 'wal')[0]?.pos ?? (args.block as Block).pos;
      throw new ConfigError('the wal block cannot change while the component runs', where, args.path);
    }
    this.settings = next;
    if (JSON.stringify(previous.endpoints) === JSON.stringify(next.endpoints)) return;
    // Replaced endpoints drain in the background; their successors start sending once they are
    // done, so no stream's entries overtake each other across the switch. An endpoint whose
    // write-ahead log a successor takes over stops at once: the successor sends what it left.
    const old = this.queues;
    const oldWals = this.wals;
    this.wals = new Map();
    const kept = new Set(next.wal ? next.endpoints.map((e) => endpointWalDir(next.wal!, e)) : []);
    const drained = Promise.all(
      old.map(async (q) => {
        const dir = next.wal ? endpointWalDir(next.wal, q.config) : undefined;
        await q.stop(dir !== undefined && kept.has(dir));
        if (dir !== undefined && !kept.has(dir)) await oldWals.get(dir)?.close();
      }),
    ).then(() => undefined);
    for (const [dir, wal] of oldWals) if (kept.has(dir)) this.wals.set(dir, wal);
    this.queues = next.endpoints.map((config) => this.newQueue(config, drained));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.queues.map((q) => q.stop()));
    await Promise.all([...this.wals.values()].map((wal) => wal.close()));
  }

  /** Queues the entries at every endpoint (each its own copy); resolves once all have them. */
  private async send(entries: readonly Entry[]): Promise<void> {
    if (this.stopped) throw new Error('logs.write is stopped');
    if (entries.length === 0) return;
    const queues = this.queues;
    await Promise.all(queues.map((q, i) => q.enqueue(i === queues.length - 1 ? entries : entries.map(cloneEntry))));
  }

  private newQueue(config: EndpointConfig, after?: Promise<void>): EndpointQueue {
    const wal = this.walFor(config);
    return new EndpointQueue({
      config,
      componentId: this.ctx.id,
      externalLabels: () => this.settings.externalLabels,
      clock: this.ctx.clock,
      metrics: this.metrics,
      transport: this.hooks.transport ?? httpTransport,
      log: this.ctx.log,
      userAgent: USER_AGENT,
      ...(this.hooks.random ? { random: this.hooks.random } : {}),
      ...(after ? { after } : {}),
      ...(wal ? { wal } : {}),
    });
  }

  /** The endpoint's write-ahead log (opened on first use), when the component keeps them. */
  private walFor(config: EndpointConfig): EndpointWal | undefined {
    const settings = this.settings.wal;
    if (!settings) return undefined;
    const dir = endpointWalDir(settings, config);
    let wal = this.wals.get(dir);
    if (!wal) {
      const labels = { component_id: this.ctx.id, host: config.host };
      const lost = (entries: number, reason: WalLossReason) => this.metrics.walLostEntries.inc({ ...labels, reason }, entries);
      const { openFile } = this.hooks;
      wal = new EndpointWal(
        { dir, maxBytes: settings.maxBytes, fsync: settings.fsync, lost, ...(openFile ? { openFile } : {}) },
        this.ctx.log,
      );
      wal.ready().catch((err: Error) => {
        this.walFailure = `opening the write-ahead log ${dir} failed: ${err.message}`;
        this.ctx.log('error', 'opening the write-ahead log failed', { dir, error: err.message });
      });
      this.wals.set(dir, wal);
    }
    return wal;
  }
}
