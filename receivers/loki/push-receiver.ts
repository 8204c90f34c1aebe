/**
 * The Loki push API as a programmatic source: a `LogSource` whose batches are the pushes a Koa
 * app receives through its routes. Mount `middleware()` (or nest `router`) in your own Koa app;
 * every push becomes one batch, and the client's answer waits for that batch's `ack` (204) or
 * `nack` (429 with `Retry-After` for a `RetryLaterError`, 500 otherwise). A push left with no
 * entry (all of it skipped, or empty) emits nothing and is answered at once. Pushes arrive
 * concurrently, so several batches may await their answers together; what they hold is bounded by
 * `max_pending_size` (429 beyond). Until the source is subscribed, and once it stops, pushes are
 * answered 503 and `GET /ready` says `not ready`.
 *
 * logs.source.api is this receiver behind its own HTTP server: it decodes its block into the
 * same settings, mounts the same routes and forwards every batch to its `forward_to`.
 */
import type { Middleware } from 'koa';
import type { Gauge } from 'prom-client';
import type { Subscription } from 'rxjs';
import type { Router } from '@koa/router';
import { logSource, SourceNotSubscribedError, type LogSource } from '../../core/delivery.js';
import type { Entry } from '../../core/entry.js';
import { InputBacklog } from '../../core/input-time.js';
import type { LogsReceiver } from '../../core/receiver.js';
import type { ComponentContext } from '../../core/runtime/component.js';
import { standaloneContext, type RunOptions } from '../../core/runtime/standalone.js';
import { decodeOptions } from '../../lib/config/schema.js';
import { sourceApiMetrics } from './metrics.js';
import { PendingBytes, SharedPendingBytes } from './pending.js';
import { handOffStep } from './decode-step.js';
import { createPushRoutes, type PushRoutes } from './push-app.js';
import { PUSH_FIELDS, pushSettingsOf, type PushSettings } from './push-settings.js';

/**
 * What `lokiPushReceiver` takes: logs.source.api's attributes without `forward_to` (the
 * subscriber is the destination) and without the `http` block (the app is yours). Values are
 * written as in a config: durations as Go duration strings (`"5s"`), sizes as strings (`"1MiB"`).
 */
export interface LokiPushOptions {
  /** Labels added to every entry; they win over pushed labels. Default none. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Keep the timestamps sent by the client instead of the receive time. Default false. */
  readonly use_incoming_timestamp?: boolean;
  /** How long `stop()` waits for the pushes in flight. Default `"30s"`. */
  readonly graceful_shutdown_timeout?: string;
  /** Largest body accepted, before and after decompression (413 beyond). Default `"100MiB"`. */
  readonly max_body_size?: string;
  /** Most memory held by pushes not yet acknowledged (429 beyond, 413 alone). Default `"64MiB"`. */
  readonly max_pending_size?: string;
  /** Most entries in one push (413 beyond). Default 100,000. */
  readonly max_entries_per_push?: number;
  /** Loki's ingest limit of the same name; 0 (the default) turns it off. */
  readonly max_label_names_per_series?: number;
  /** Loki's ingest limit of the same name; 0 (the default) turns it off. */
  readonly max_label_name_length?: number;
  /** Loki's ingest limit of the same name; 0 (the default) turns it off. */
  readonly max_label_value_length?: number;
  /** Loki's ingest limit of the same name, such as `"256KiB"`; `"0"` (the default) turns it off. */
  readonly max_line_size?: string;
}

/**
 * A Loki push receiver: an Observable of one batch per push (see `LogSource`), plus the Koa
 * routes that receive the pushes.
 */
export interface LokiPushReceiver extends LogSource {
  /**
   * `POST /loki/api/v1/push`, `/api/v1/push`, `/loki/api/v1/raw`, `/api/v1/raw` and
   * `GET /ready`. Each route answers its own errors and counts itself, so the router can be
   * nested under a prefix: `outer.use('/logs', push.router.routes(), push.router.allowedMethods())`.
   */
  readonly router: Router;
  /**
   * The routes plus 405 answers to other methods on their paths, for `app.use(...)` at the root
   * of your Koa app; requests to other paths go on to your next middleware.
   */
  middleware(): Middleware;
  /**
   * New options (a reload): labels, timestamps and limits apply to the next push; a smaller
   * `max_pending_size` keeps what is already admitted. Invalid options throw and change nothing.
   */
  update(options: LokiPushOptions): void;
}

/** The name a receiver made by `lokiPushReceiver` goes by in errors, metrics and logs by default. */
const FACTORY_NAME = 'lokiPushReceiver';

/**
 * Makes a Loki push receiver from options decoded and checked exactly as logs.source.api's
 * attributes (invalid ones throw the same `ConfigError` texts). Nothing listens: mount
 * `middleware()` in your own Koa app, and subscribe to receive the pushes.
 *
 * ```ts
 * const push = lokiPushReceiver({ labels: { source: 'push' } });
 * const app = new Koa().use(push.middleware()).use(metricsMiddleware());
 * push.pipe(sendTo(mySink)).subscribe();
 * app.listen(3100);
 * ```
 */
export function lokiPushReceiver(options: LokiPushOptions = {}, run?: RunOptions): LokiPushReceiver {
  const ctx = standaloneContext(FACTORY_NAME, run);
  const path = [ctx.id];
  const decode = (given: LokiPushOptions): PushSettings => pushSettingsOf(decodeOptions({ fields: PUSH_FIELDS }, given, path));
  const receiver = pushReceiver(decode(options), ctx);
  return Object.assign(receiver.source, {
    router: receiver.routes.router,
    middleware: receiver.routes.middleware,
    update: (next: LokiPushOptions) => receiver.reconfigure(decode(next)),
  });
}

/** A push receiver running on settings already decoded (from options or a config block). */
export interface PushReceiver {
  readonly source: LogSource;
  readonly routes: PushRoutes;
  /** Applies new settings to the next push. */
  reconfigure(settings: PushSettings): void;
  /**
   * Ends a stop's wait for the pushes in flight at once: for a server whose listener has closed
   * (its own grace period over), so no client is left to answer.
   */
  stopWaiting(): void;
}

/**
 * Builds the receiver both faces share. Pushes are refused (503) until `source` is subscribed;
 * stopping it refuses new ones and waits, up to `graceful_shutdown_timeout` on the context's
 * clock, for the pushes in flight to be answered before the source completes.
 */
export function pushReceiver(initial: PushSettings, ctx: ComponentContext): PushReceiver {
  let settings = initial;
  const metrics = sourceApiMetrics(ctx.registry);
  // In a sharded run's main thread, bodies are decoded on the shards, under the same bound.
  const shared = ctx.front ? new SharedPendingBytes(settings.maxPendingBytes) : undefined;
  const pending = shared ?? new PendingBytes(settings.maxPendingBytes);
  const unshow = shared ? showWhenGathered(metrics.pendingBytes, ctx.id, () => shared.bytes) : () => {};
  const inFlight = new InFlight();
  /** Where pushes go while subscribed; kept through a stop so the pushes in flight still arrive. */
  let target: LogsReceiver | undefined;
  let accepting = false;

  const source = logSource((receiver) => {
    target = receiver;
    accepting = true;
    return {
      stop: async () => {
        accepting = false;
        await inFlight.drained(settings.graceMs, ctx);
        if (target === receiver) target = undefined;
        // A stopped source's bound changes no more: a removed component is not read again.
        unshow();
      },
    };
  });
  const routes = createPushRoutes({
    componentId: ctx.id,
    settings: () => settings.app,
    pending,
    forward: (entries: Entry[], sendOptions) =>
      target ? target.send(entries, sendOptions) : Promise.reject(new SourceNotSubscribedError()),
    backlog: new InputBacklog(),
    nowNs: () => ctx.clock.nowNs(),
    stopping: () => !accepting,
    inFlight: (push) => inFlight.run(push),
    metrics,
    log: ctx.log,
    ...(ctx.front && shared ? { decode: handOffStep(ctx.front, ctx.id, shared) } : {}),
  });
  return {
    source,
    routes,
    reconfigure: (next) => {
      if (next.maxPendingBytes !== settings.maxPendingBytes) pending.resize(next.maxPendingBytes);
      settings = next;
    },
    stopWaiting: () => inFlight.stopWaiting(),
  };
}

/** The series each gauge sets when the metrics are gathered, by component id. */
const gatheredSeries = new WeakMap<Gauge<'component_id'>, Map<string, () => number>>();

/**
 * Sets `gauge`'s series of `componentId` from `read` whenever the metrics are gathered, besides
 * whenever this thread sets it: for a bound the shards change too (they decode the bodies while
 * holding it), which this thread would otherwise show only as it last changed it itself. The
 * shards leave their own series unset, so the run's /metrics shows the one value. Returns the undo.
 */
function showWhenGathered(gauge: Gauge<'component_id'>, componentId: string, read: () => number): () => void {
  let series = gatheredSeries.get(gauge);
  if (!series) {
    const each = new Map<string, () => number>();
    series = each;
    gatheredSeries.set(gauge, each);
    // prom-client runs a metric's `collect` before reading its values (as a gauge made with one).
    Object.assign(gauge, {
      collect: () => {
        for (const [id, value] of each) gauge.set({ component_id: id }, value());
      },
    });
  }
  series.set(componentId, read);
  const each = series;
  return () => {
    if (each.get(componentId) === read) each.delete(componentId);
  };
}

/** The pushes being handled, so a stop can wait for them. */
class InFlight {
  private count = 0;
  private readonly waiting: (() => void)[] = [];

  async run<T>(push: () => Promise<T>): Promise<T> {
    this.count++;
    try {
      return await push();
    } finally {
      this.count--;
      if (this.count === 0) this.stopWaiting();
    }
  }

  /** Resolves every `drained` waiting now. */
  stopWaiting(): void {
    for (const wake of this.waiting.splice(0)) wake();
  }

  /** Resolves once none is in flight, or after `graceMs` on the context's clock. */
  drained(graceMs: number, ctx: ComponentContext): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let timer: Subscription | undefined;
      const done = () => {
        timer?.unsubscribe();
        resolve();
      };
      this.waiting.push(done);
      timer = ctx.clock.scheduler.schedule(done, graceMs);
    });
  }
}
