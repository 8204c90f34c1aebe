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
 *
 * Built on the programmatic `lokiPushReceiver` (loki/push-receiver.ts): the same settings, routes
 * and bounds, behind a listener of its own, with every batch forwarded to `forward_to`. In a
 * sharded run (core/shards) the main thread's instance serves HTTP and reads bodies, and hands
 * each body to a shard's instance, which decodes it and forwards its entries there.
 */
import { forwardBatches } from '../core/delivery.js';
import { InputBacklog } from '../core/input-time.js';
import { fanOut, LOGS_RECEIVER, type LogsReceiver } from '../core/receiver.js';
import { defineComponent, healthy, type ComponentArgs, type ComponentContext, type Health } from '../core/runtime/component.js';
import { t } from '../lib/config/schema.js';
import { ConnectionGauges } from './http/connection-gauges.js';
import { ManagedListener } from './http/listener.js';
import { httpBlockSpec, resolveHttpConfig, type HttpBlockDefaults, type HttpServerConfig } from './http/schema.js';
import { decodeStep, takeHandedOff } from './loki/decode-step.js';
import { sourceApiMetrics } from './loki/metrics.js';
import { pushReceiver, type PushReceiver } from './loki/push-receiver.js';
import { PUSH_FIELDS, pushSettingsOf, type PushSettings } from './loki/push-settings.js';

/** The generic server default: no connection limit. */
const HTTP_DEFAULTS: HttpBlockDefaults = { listenPort: 8080, connLimit: 0 };

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
    forward_to: { kind: t.list(t.capsule<LogsReceiver>(LOGS_RECEIVER)), required: true, doc: 'Receivers the entries go to.' },
    ...PUSH_FIELDS,
  },
  blocks: { http: httpBlockSpec(HTTP_DEFAULTS) },
  validate: (values, checks): Settings => ({
    forwardTo: values.forward_to,
    http: checks.attempt(() => resolveHttpConfig(values.http, HTTP_DEFAULTS, checks.block, checks.path), undefined)!,
    push: pushSettingsOf(values),
  }),
  build(args, ctx) {
    return ctx.shard ? new ShardPushIntake(args, ctx) : new LogsSourceApi(args, ctx);
  },
});

interface Settings {
  readonly forwardTo: readonly LogsReceiver[];
  readonly http: HttpServerConfig;
  readonly push: PushSettings;
}

/**
 * The component: a `lokiPushReceiver` on these settings, its routes served by a listener of its
 * own, and every batch forwarded to `forward_to` (read per batch, so a reload's list applies to
 * the next push).
 */
export class LogsSourceApi {
  readonly exports = {};
  private settings: Settings;
  private readonly receiver: PushReceiver;
  private readonly unsubscribe: () => void;
  private readonly listener: ManagedListener;

  constructor(args: ComponentArgs<Settings>, ctx: ComponentContext) {
    this.settings = args.values;
    const metrics = sourceApiMetrics(ctx.registry);
    this.receiver = pushReceiver(this.settings.push, ctx);
    this.unsubscribe = forwardBatches(this.receiver.source, () => this.settings.forwardTo);
    this.listener = new ManagedListener(this.settings.http, {
      handler: this.receiver.routes.serverApp().callback(),
      log: ctx.log,
      graceMs: () => this.settings.push.graceMs,
      gauges: new ConnectionGauges(metrics.connections, metrics.connectionsLimit, { component_id: ctx.id, protocol: 'http' }),
    });
  }

  health(): Health {
    return this.listener.health();
  }

  async start(): Promise<void> {
    await this.listener.start();
  }

  update(args: ComponentArgs<Settings>): void {
    const next = args.values;
    this.settings = next;
    this.receiver.reconfigure(next.push);
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
    // The source refuses new pushes at once. The listener's close bounds the wait (on the real
    // clock, as its connections live): once it is closed no client is left to answer.
    const stopped = this.receiver.source.stop();
    await this.listener.stop();
    this.receiver.stopWaiting();
    await stopped;
    this.unsubscribe();
  }
}

/**
 * The component on a shard thread of a sharded run: no listener (the main thread's instance
 * serves HTTP and hands each body off), only the decode step, run on the bodies handed here with
 * the entries forwarded to this shard's `forward_to`. What it holds is bounded by the main
 * thread's instance's `max_pending_size`: each body comes with its claim on that one bound, shared
 * by the main thread and every shard, which also resizes it on a reload and shows it.
 */
class ShardPushIntake {
  readonly exports = {};
  private settings: Settings;
  private readonly unserve: () => void;
  /** What this intake still holds, as the stages here and on other shards follow it; closed on stop. */
  private readonly backlog = new InputBacklog();

  constructor(args: ComponentArgs<Settings>, ctx: ComponentContext) {
    this.settings = args.values;
    const step = decodeStep({
      settings: () => this.settings.push.app,
      forward: (entries, options) => fanOut(this.settings.forwardTo, entries, options),
      backlog: this.backlog,
      nowNs: () => ctx.clock.nowNs(),
      // The pending-bytes gauge is the main thread's: it reads the shared bound.
      showPending: () => {},
      log: ctx.log,
    });
    this.unserve = ctx.shard!.serveBodies(ctx.id, (body, request, claim) => takeHandedOff(step, body, request, claim));
  }

  health(): Health {
    return healthy();
  }

  update(args: ComponentArgs<Settings>): void {
    this.settings = args.values;
  }

  /** The main thread's instance has answered every push before the shards stop. */
  async stop(): Promise<void> {
    this.unserve();
    this.backlog.close();
  }
}
