/**
 * logs.source.api — an HTTP server speaking the Loki push API: `POST /loki/api/v1/push` with JSON
 * (plain, gzip or deflate) or snappy-compressed protobuf bodies, `POST /loki/api/v1/raw` with one
 * entry per line, and `GET /ready`. Pushed entries go to every receiver in `forward_to`. Exports
 * nothing.
 *
 * Reference behaviour kept: the `http` block (listen_address, listen_port 8080, conn_limit with
 * extra connections held unaccepted, timeouts, TLS); `labels` are added to every stream and win
 * over pushed labels; labels starting with `__` are dropped; entries get the receive time unless
 * `use_incoming_timestamp` is set; a new `forward_to` or `labels` applies to the next request, and
 * the listener is replaced only when the `http` block changes (gracefully: the old one stops
 * accepting and answers what it has accepted, each response closing its connection).
 *
 * Added here: the tenant from `X-Scope-OrgID` is kept as the `__tenant_id__` label (raw pushes
 * included); a push is answered only once its entries are taken over downstream, and what the
 * source holds meanwhile (bodies and decoded entries at an estimated size) is bounded by
 * `max_pending_size` for every push, the first included (a push that does not fit beside the
 * others is answered 429 with `Retry-After`, one that cannot fit even alone 413); bodies over
 * `max_body_size` (before or after decompression) and pushes of more than `max_entries_per_push`
 * entries are answered 413; Loki's ingest limits on label names, label lengths and line size can
 * be turned on, and are answered with Loki's 400 messages.
 */
import type { Block } from '../lib/config/ast.js';
import { ConfigError, ConfigErrors } from '../lib/config/errors.js';
import { attributePos } from '../lib/loki/config.js';
import type { Entry, Labels } from '../core/entry.js';
import { fanOut, LOGS_RECEIVER, type LogsReceiver } from '../core/receiver.js';
import { defineComponent, type ComponentArgs, type ComponentContext, type Health } from '../core/runtime/component.js';
import { t } from '../core/schema.js';
import { ConnectionGauges } from './http/connection_gauges.js';
import { ManagedListener } from './http/listener.js';
import { httpBlockSpec, resolveHttpConfig, type HttpBlockDefaults, type HttpServerConfig } from './http/schema.js';
import { byteSize, durationMs } from '../lib/loki/config.js';
import { sourceApiMetrics, type SourceApiMetrics } from './loki/metrics.js';
import { PendingBytes } from './loki/pending.js';
import { createPushApp, type PushAppSettings } from './loki/push_app.js';
import type { IngestLimits } from './loki/ingest_limits.js';

/** The generic server default: no connection limit. */
const HTTP_DEFAULTS: HttpBlockDefaults = { listenPort: 8080, connLimit: 0 };

/**
 * Entries one push may carry by default. A 1 MiB batch, the usual client default, holds at most
 * about 60,000 entries of one-byte lines; 100,000 decoded entries are estimated at about 40 MiB,
 * within the default `max_pending_size`.
 */
const DEFAULT_MAX_ENTRIES_PER_PUSH = 100_000;

export const logsSourceApiComponent = defineComponent({
  name: 'logs.source.api',
  doc: 'Receives log entries over the Loki push API (JSON, protobuf and raw lines) and forwards them to other components.',
  example: `logs.source.api "push" {
  http {
    listen_address = "127.0.0.1"
    listen_port    = 3500
  }
  labels     = { source = "push" }
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" { }`,
  exportNames: [],
  fields: {
    forward_to: { kind: t.list(t.capsule(LOGS_RECEIVER)), required: true, doc: 'Receivers the entries go to.' },
    labels: { kind: t.map(t.string), default: {}, doc: 'Labels added to every entry; they win over pushed labels.' },
    use_incoming_timestamp: { kind: t.bool, default: false, doc: 'Keep the timestamps sent by the client instead of the receive time.' },
    graceful_shutdown_timeout: { kind: t.duration, default: 30_000_000_000n, doc: 'How long stopping waits for requests in flight.' },
    max_body_size: {
      kind: t.string,
      default: '100MiB',
      doc: 'Largest request body accepted, before and after decompression; larger ones are answered 413.',
    },
    max_pending_size: {
      kind: t.string,
      default: '64MiB',
      doc: 'Most memory held at once by pushes being read, decoded and waiting for receivers to take entries over (bodies, plus 400 bytes and the text of each decoded entry); a push beyond it is answered 429, one that cannot fit even alone 413.',
    },
    max_entries_per_push: {
      kind: t.int,
      default: DEFAULT_MAX_ENTRIES_PER_PUSH,
      doc: 'Most entries in one push; a push with more is answered 413 as soon as decoding reaches one more.',
    },
    max_label_names_per_series: {
      kind: t.int,
      default: 0,
      doc: "Most label names a pushed stream may have (Loki's limit of the same name); 0 turns the check off.",
    },
    max_label_name_length: {
      kind: t.int,
      default: 0,
      doc: "Longest label name of a pushed stream, in bytes (Loki's limit of the same name); 0 turns the check off.",
    },
    max_label_value_length: {
      kind: t.int,
      default: 0,
      doc: "Longest label value of a pushed stream, in bytes (Loki's limit of the same name); 0 turns the check off.",
    },
    max_line_size: {
      kind: t.string,
      default: '0',
      doc: 'Longest pushed line (Loki\'s limit of the same name), such as "256KiB"; 0 turns the check off.',
    },
  },
  blocks: { http: httpBlockSpec(HTTP_DEFAULTS) },
  build(args, ctx) {
    return new LogsSourceApi(args, ctx);
  },
});

interface Settings {
  readonly forwardTo: readonly LogsReceiver[];
  readonly http: HttpServerConfig;
  readonly graceMs: number;
  readonly app: PushAppSettings;
  readonly maxPendingBytes: number;
}

function settingsOf(args: ComponentArgs): Settings {
  const block = args.block as Block;
  const v = args.values;
  try {
    const errors: ConfigError[] = [];
    const attempt = <T>(fn: () => T, fallback: T): T => {
      try {
        return fn();
      } catch (err) {
        if (err instanceof ConfigErrors) errors.push(...err.errors);
        else if (err instanceof ConfigError) errors.push(err);
        else throw err;
        return fallback;
      }
    };
    const http = attempt(
      () => resolveHttpConfig(v.http as Record<string, unknown> | undefined, HTTP_DEFAULTS, block, args.path),
      undefined,
    );
    const maxBodyBytes = attempt(() => byteSize(v.max_body_size as string, 'max_body_size', block, args.path, 1), 0);
    const maxPendingBytes = attempt(() => byteSize(v.max_pending_size as string, 'max_pending_size', block, args.path, 1), 0);
    const count = (name: string, min: number): number =>
      attempt(() => {
        const value = v[name] as number;
        if (value < min)
          throw new ConfigError(`attribute "${name}": must be at least ${min}, got ${value}`, attributePos(block, name), args.path);
        return value;
      }, 0);
    const maxEntriesPerPush = count('max_entries_per_push', 1);
    const limits: IngestLimits = {
      maxLabelNamesPerSeries: count('max_label_names_per_series', 0),
      maxLabelNameLength: count('max_label_name_length', 0),
      maxLabelValueLength: count('max_label_value_length', 0),
      maxLineSize: attempt(() => byteSize(v.max_line_size as string, 'max_line_size', block, args.path, 0), 0),
    };
    if (errors.length > 0) throw new ConfigErrors(errors);
    return {
      forwardTo: v.forward_to as LogsReceiver[],
      http: http!,
      graceMs: durationMs(v.graceful_shutdown_timeout),
      app: {
        labels: v.labels as Labels,
        useIncomingTimestamp: v.use_incoming_timestamp as boolean,
        maxBodyBytes,
        maxEntriesPerPush,
        limits,
      },
      maxPendingBytes,
    };
  } catch (err) {
    if (err instanceof ConfigErrors || err instanceof ConfigError) throw err;
    throw new ConfigError((err as Error).message, block.pos, args.path);
  }
}

export class LogsSourceApi {
  readonly exports = {};
  private settings: Settings;
  private stopping = false;
  private pending: PendingBytes;
  private readonly metrics: SourceApiMetrics;
  private readonly listener: ManagedListener;

  constructor(args: ComponentArgs, ctx: ComponentContext) {
    this.settings = settingsOf(args);
    this.metrics = sourceApiMetrics(ctx.registry);
    this.pending = new PendingBytes(this.settings.maxPendingBytes);
    const app = createPushApp({
      componentId: ctx.id,
      settings: () => this.settings.app,
      pending: this.pending,
      forward: (entries: Entry[]) => fanOut(this.settings.forwardTo, entries),
      nowNs: () => ctx.clock.nowNs(),
      stopping: () => this.stopping,
      metrics: this.metrics,
      log: ctx.log,
    }).callback();
    this.listener = new ManagedListener(this.settings.http, {
      handler: app,
      log: ctx.log,
      graceMs: () => this.settings.graceMs,
      gauges: new ConnectionGauges(this.metrics.connections, this.metrics.connectionsLimit, { component_id: ctx.id, protocol: 'http' }),
    });
  }

  health(): Health {
    return this.listener.health();
  }

  async start(): Promise<void> {
    await this.listener.start();
  }

  update(args: ComponentArgs): void {
    const next = settingsOf(args);
    const previous = this.settings;
    this.settings = next;
    if (next.maxPendingBytes !== previous.maxPendingBytes) this.pending.resize(next.maxPendingBytes);
    this.listener.reconfigure(next.http);
  }

  /** Resolves once every listener change asked for so far has happened (or failed). */
  settled(): Promise<void> {
    return this.listener.settled();
  }

  /** The running listener's base URL, e.g. `http://127.0.0.1:8080`. */
  url(): string | undefined {
    return this.listener.url();
  }

  /**
   * Stops accepting pushes, then waits (up to graceful_shutdown_timeout) for the requests in
   * flight: each is answered once its entries are taken over, so no push is answered 204 before
   * the receivers have its entries. What happens to them after that is the receivers' promise:
   * logs.write keeps them in memory, where a crash or an undelivered drain loses them, unless its
   * `wal` block keeps them on disk.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.listener.stop();
  }
}
