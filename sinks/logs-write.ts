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
 *
 * The same writer is usable from code as a sink: `lokiWrite(options)` takes the block's attributes
 * and nested blocks as an object, and the component is that sink built from its decoded block.
 */
import { join } from 'node:path';
import { ConfigError, type Position } from '../lib/config/errors.js';
import type { Entry, Labels } from '../core/entry.js';
import { cloneEntry } from '../core/entry.js';
import { logSink, type LogSink } from '../core/delivery.js';
import { logsReceiverCapsule, type LogsReceiver } from '../core/receiver.js';
import {
  componentOptions,
  defineComponent,
  healthy,
  unhealthy,
  type ComponentArgs,
  type ComponentContext,
  type Health,
} from '../core/runtime/component.js';
import { standaloneContext, type RunOptions } from '../core/runtime/standalone.js';
import { nestedBlocks, t } from '../lib/config/schema.js';
import { endpointBlockSpec, resolveEndpoints, type EndpointConfig } from './loki/endpoint-config.js';
import { EndpointQueue } from './loki/endpoint-queue.js';
import { EndpointWal, type WalLossReason } from './loki/endpoint-wal.js';
import { writeMetrics, type WriteMetrics } from './loki/metrics.js';
import { httpTransport } from './loki/http-transport.js';
import type { PushTransport } from './loki/transport.js';
import type { OpenFile } from '../lib/wal/segment-log.js';
import { endpointWalDir, resolveWal, walBlockSpec, type WalConfig } from './loki/wal-config.js';

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
  validate: (values, checks): Settings => {
    const endpoints = resolveEndpoints(values.endpoint, checks);
    return { endpoints, externalLabels: values.external_labels, wal: resolveWal(values.wal, endpoints, checks) };
  },
  build(args, ctx) {
    return new LogsWrite(args, ctx);
  },
});

/** One `endpoint` block of logs.write as an object: the block's attributes and nested blocks. */
export interface LokiEndpointOptions {
  /** Full URL of the push API, e.g. `http://loki:3100/loki/api/v1/push`. */
  readonly url: string;
  /** Name for logs, metrics and the write-ahead log's subdirectory. */
  readonly name?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly bearer_token?: string;
  readonly bearer_token_file?: string;
  /** `X-Scope-OrgID` of entries without a `__tenant_id__` label. */
  readonly tenant_id?: string;
  /** Durations are Go duration strings: `"10s"`, `"250ms"`. */
  readonly remote_timeout?: string;
  readonly batch_wait?: string;
  /** Sizes are base-2 byte strings: `"1MiB"`. */
  readonly batch_size?: string;
  readonly min_backoff_period?: string;
  readonly max_backoff_period?: string;
  /** Attempts per batch in total; 0 retries without limit. */
  readonly max_backoff_retries?: number;
  readonly retry_on_http_429?: boolean;
  readonly basic_auth?: { readonly username?: string; readonly password?: string; readonly password_file?: string };
  /** `capacity`: bytes of lines held in memory before senders wait; `drain_timeout`: how long stopping delivers. */
  readonly queue_config?: { readonly capacity?: string; readonly drain_timeout?: string };
}

/** The `wal` block of logs.write as an object; as in a config, it is off unless `enabled` is true. */
export interface LokiWalOptions {
  readonly enabled?: boolean;
  /** Required when enabled; each endpoint keeps its own subdirectory. */
  readonly dir?: string;
  /** Most bytes of log files per endpoint, e.g. `"1GiB"`; senders wait beyond it. */
  readonly max_size?: string;
  readonly fsync?: 'always' | 'never';
}

/**
 * The options of `lokiWrite`: logs.write's attributes and blocks, with the same names, defaults
 * and validation as in a config.
 */
export interface LokiWriteOptions {
  /** One or more endpoints; each gets every entry. */
  readonly endpoint: readonly LokiEndpointOptions[];
  /** Labels added to every stream sent; an entry's own labels win. */
  readonly external_labels?: Readonly<Record<string, string>>;
  readonly wal?: LokiWalOptions;
}

/** A running Loki writer used from code (see `lokiWrite`). */
export interface LokiWriteSink extends LogSink {
  /**
   * Applies new options as a config reload does: an endpoint whose settings changed gets a new
   * queue once the old one has drained (or, with a write-ahead log, takes the log over), other
   * changes apply to the next batch. Invalid options, or a changed `wal`, throw a `ConfigError`
   * and change nothing.
   */
  update(options: LokiWriteOptions): void;
  /** Unhealthy once a write-ahead log could not be opened. */
  health(): Health;
}

/**
 * Sends log entries to Loki-compatible push endpoints, as the logs.write component does. A send
 * (or a batch it observes) is acknowledged once the entries are queued at every endpoint, or with
 * `wal` once they are written to the write-ahead log; it waits while a queue or log is full, so a
 * slow endpoint slows the source; a log whose disk is full refuses it with `RetryLaterError`.
 * `stop()` (or the observed source completing) delivers what is queued for up to each endpoint's
 * `queue_config.drain_timeout` and closes the logs. Invalid options throw the config's `ConfigError`.
 *
 * `hooks` replace the HTTP client, the backoff jitter or file opening (tests).
 *
 * @example
 * const sink = lokiWrite({ endpoint: [{ url: 'http://localhost:3100/loki/api/v1/push', batch_wait: '100ms' }] });
 * source.subscribe(sink);
 * // later: await source.stop(); await sink.stop();
 */
export function lokiWrite(options: LokiWriteOptions, run?: RunOptions, hooks: LogsWriteTestHooks = {}): LokiWriteSink {
  const ctx = standaloneContext(logsWriteComponent.name, run);
  const writer = new LokiWriter(settingsOfOptions(options, ctx), ctx, hooks);
  return Object.assign(sinkOf(writer), {
    update: (next: LokiWriteOptions) => writer.reconfigure(settingsOfOptions(next, ctx), undefined, [logsWriteComponent.name]),
    health: () => writer.health(),
  });
}

/** Options for tests: another transport than the HTTP client, a fixed backoff jitter, a disk that fills up. */
export interface LogsWriteTestHooks {
  readonly transport?: PushTransport;
  readonly random?: () => number;
  readonly openFile?: OpenFile;
}

/** The logs.write component: its decoded block made into the writer `lokiWrite` makes, exported as `receiver`. */
export class LogsWrite {
  readonly exports;
  private readonly writer: LokiWriter;
  private readonly sink: LogSink;

  constructor(
    args: ComponentArgs<Settings>,
    private readonly ctx: ComponentContext,
    hooks: LogsWriteTestHooks = {},
  ) {
    this.writer = new LokiWriter(perShard(args.values, ctx), ctx, hooks);
    this.sink = sinkOf(this.writer);
    this.exports = { receiver: logsReceiverCapsule(this.sink) };
  }

  health(): Health {
    return this.writer.health();
  }

  update(args: ComponentArgs<Settings>): void {
    const where = nestedBlocks(args.block, 'wal')[0]?.pos ?? args.block.pos;
    this.writer.reconfigure(perShard(args.values, this.ctx), where, args.path);
  }

  stop(): Promise<void> {
    return this.sink.stop();
  }
}

/** On a shard of a sharded run (core/shards) every shard keeps a log of its own, in `<dir>/shard-<i>`. */
function perShard(settings: Settings, ctx: ComponentContext): Settings {
  if (!ctx.shard || !settings.wal) return settings;
  return { ...settings, wal: { ...settings.wal, dir: join(settings.wal.dir, `shard-${ctx.shard.index}`) } };
}

function sinkOf(writer: LokiWriter): LogSink {
  return logSink(writer, () => writer.stop());
}

/** What the writer runs on: the validated block. */
export interface Settings {
  readonly endpoints: readonly EndpointConfig[];
  readonly externalLabels: Labels;
  readonly wal: WalConfig | undefined;
}

/** Options given in code, with the component's defaults and checks (the same ConfigError texts, without positions). */
function settingsOfOptions(options: LokiWriteOptions, ctx: ComponentContext): Settings {
  // An empty list is a config without endpoint blocks: refused as missing, not a writer sending nowhere.
  const given = options.endpoint?.length === 0 ? { ...options, endpoint: undefined } : options;
  return componentOptions(logsWriteComponent, given, [logsWriteComponent.name], ctx);
}

/**
 * The writer itself: a queue per endpoint (with its write-ahead log when `wal` is on), taking
 * entries over in `send`. What `lokiWrite` returns and the component exports is this as a sink.
 */
class LokiWriter implements LogsReceiver {
  private settings: Settings;
  private queues: EndpointQueue[];
  /** Write-ahead logs by directory, shared by an endpoint's successive queues. */
  private wals = new Map<string, EndpointWal>();
  private walFailure: string | undefined;
  private readonly metrics: WriteMetrics;
  private stopped = false;

  constructor(
    settings: Settings,
    private readonly ctx: ComponentContext,
    private readonly hooks: LogsWriteTestHooks,
  ) {
    this.settings = settings;
    this.metrics = writeMetrics(ctx.registry);
    this.queues = this.settings.endpoints.map((config) => this.newQueue(config));
  }

  health(): Health {
    return this.walFailure === undefined ? healthy() : unhealthy(this.walFailure);
  }

  /** Applies new settings; `walPos` and `path` place the error a changed `wal` is. */
  reconfigure(next: Settings, walPos: Position | undefined, path: readonly string[]): void {
    const previous = this.settings;
    if (JSON.stringify(previous.wal) !== JSON.stringify(next.wal))
      throw new ConfigError('the wal block cannot change while the component runs', walPos, path);
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
  async send(entries: readonly Entry[]): Promise<void> {
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
