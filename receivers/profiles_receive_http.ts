/**
 * profiles.receive_http — an HTTP server that accepts profiles on the legacy ingest API
 * (`POST /ingest`) and the Connect/gRPC/gRPC-Web push API (`POST /push.v1.PusherService/Push`)
 * and forwards each one to every receiver in `forward_to`. Exports nothing.
 *
 * Reference behaviour kept: `conn_limit` defaults to 16384 and holds extra connections unaccepted
 * instead of refusing them; a new `forward_to` applies to the next request without a restart, and
 * the listener is replaced only when the `http` block changes (gracefully, as logs.source.api's;
 * its gauges then start again); the component is unhealthy only when its configuration cannot be
 * applied (invalid, or the address cannot be bound).
 *
 * Added here (the reference reads any body whole, however large): `max_body_size` bounds one
 * request body, before and after gzip is undone, answering 413 (Connect and gRPC:
 * `resource_exhausted`); `max_pending_size` bounds the body bytes all requests hold together,
 * from their first byte until they are answered, answering 429 with `Retry-After` (Connect and
 * gRPC: `resource_exhausted`) to a request that does not fit. Both apply to HTTP/1.1 and HTTP/2
 * alike; 0 lifts either bound.
 */
import type { Block } from '../lib/config/ast.js';
import { ConfigError, ConfigErrors } from '../lib/config/errors.js';
import { PROFILES_RECEIVER, type ProfilesReceiver } from '../core/profiles.js';
import { defineComponent, type ComponentArgs, type ComponentContext, type Health } from '../core/runtime/component.js';
import { t } from '../core/schema.js';
import { byteSize } from '../lib/loki/config.js';
import { BodyBudget, type BodyLimits } from './http/body.js';
import { ManagedListener } from './http/listener.js';
import { httpBlockSpec, resolveHttpConfig, type HttpBlockDefaults, type HttpServerConfig } from './http/schema.js';
import type { RunningHttpServer } from './http/server.js';
import { createProfilesHandler } from './profiles/app.js';
import { connectionGauges } from './profiles/metrics.js';

/** `64 / 4 * 1024` in the reference: its default for this component, not the generic 0. */
export const DEFAULT_CONN_LIMIT = 16_384;
const HTTP_DEFAULTS: HttpBlockDefaults = { listenPort: 8080, connLimit: DEFAULT_CONN_LIMIT };
const NS_PER_MS = 1_000_000n;
/**
 * 4 times the largest profile a Pyroscope server accepts by default (4 MiB): nothing it would take
 * is refused here, while a runaway upload stops well short of hurting the process.
 */
export const DEFAULT_MAX_BODY_SIZE = '16MiB';
/** Eight bodies of the largest size at once; profiles are usually tens of KiB. */
export const DEFAULT_MAX_PENDING_SIZE = '128MiB';

export const profilesReceiveHttpComponent = defineComponent({
  name: 'profiles.receive_http',
  doc: 'Receives profiles over HTTP (ingest API and push API) and forwards them to other components.',
  exportNames: [],
  fields: {
    forward_to: { kind: t.list(t.capsule(PROFILES_RECEIVER)), required: true, doc: 'Receivers the profiles go to.' },
    graceful_shutdown_timeout: { kind: t.duration, default: 30_000_000_000n, doc: 'How long stopping waits for requests in flight.' },
    max_body_size: {
      kind: t.string,
      default: DEFAULT_MAX_BODY_SIZE,
      doc: 'Largest request body accepted, before and after gzip is undone; larger ones are answered 413 (resource_exhausted on Push). 0: no limit.',
    },
    max_pending_size: {
      kind: t.string,
      default: DEFAULT_MAX_PENDING_SIZE,
      doc: 'Most body bytes held at once by requests being read or forwarded; a request beyond it is answered 429 (resource_exhausted on Push). 0: no limit.',
    },
  },
  blocks: { http: httpBlockSpec(HTTP_DEFAULTS) },
  build(args, ctx) {
    return new ProfilesReceiveHttp(args, ctx);
  },
});

interface Settings {
  readonly forwardTo: readonly ProfilesReceiver[];
  readonly http: HttpServerConfig;
  readonly graceMs: number;
  readonly maxBodyBytes: number;
  readonly maxPendingBytes: number;
}

function settingsOf(args: ComponentArgs): Settings {
  const block = args.block as Block;
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
  try {
    const http = attempt(
      () => resolveHttpConfig(args.values.http as Record<string, unknown> | undefined, HTTP_DEFAULTS, block, args.path),
      undefined,
    );
    const maxBodyBytes = attempt(() => byteSize(args.values.max_body_size as string, 'max_body_size', block, args.path), 0);
    const maxPendingBytes = attempt(() => byteSize(args.values.max_pending_size as string, 'max_pending_size', block, args.path), 0);
    if (errors.length > 0) throw new ConfigErrors(errors);
    return {
      forwardTo: args.values.forward_to as ProfilesReceiver[],
      http: http!,
      graceMs: Number((args.values.graceful_shutdown_timeout as bigint) / NS_PER_MS),
      maxBodyBytes,
      maxPendingBytes,
    };
  } catch (err) {
    if (err instanceof ConfigErrors || err instanceof ConfigError) throw err;
    throw new ConfigError((err as Error).message, args.block.pos, args.path);
  }
}

export class ProfilesReceiveHttp {
  readonly exports = {};
  private settings: Settings;
  private readonly listener: ManagedListener;
  /** Shared by every request of every listener the component runs. */
  private readonly budget: BodyBudget;
  private limits: BodyLimits;

  constructor(args: ComponentArgs, ctx: ComponentContext) {
    this.settings = settingsOf(args);
    this.budget = new BodyBudget(this.settings.maxPendingBytes);
    this.limits = { maxBytes: this.settings.maxBodyBytes, budget: this.budget };
    const app = createProfilesHandler({ receivers: () => this.settings.forwardTo, log: ctx.log, limits: () => this.limits });
    this.listener = new ManagedListener(this.settings.http, {
      handler: app,
      log: ctx.log,
      graceMs: () => this.settings.graceMs,
      gauges: connectionGauges(ctx.registry, ctx.id),
      onAcceptError: (err) => ctx.log('warn', 'failed to accept a connection', { err: err.message }),
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
    this.settings = next;
    this.budget.resize(next.maxPendingBytes);
    this.limits = { maxBytes: next.maxBodyBytes, budget: this.budget };
    this.listener.reconfigure(next.http);
  }

  /** Resolves once every listener change asked for so far has happened (or failed). */
  settled(): Promise<void> {
    return this.listener.settled();
  }

  /** The running listener's base URL, e.g. `http://127.0.0.1:4040`. */
  url(): string | undefined {
    return this.listener.url();
  }

  /** The running listener, where its admitted and waiting connections can be read. */
  get server(): RunningHttpServer | undefined {
    return this.listener.running();
  }

  async stop(): Promise<void> {
    await this.listener.stop();
  }
}
