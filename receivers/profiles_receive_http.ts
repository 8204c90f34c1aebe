/**
 * profiles.receive_http — an HTTP server that accepts profiles on the legacy ingest API
 * (`POST /ingest`) and the Connect/gRPC/gRPC-Web push API (`POST /push.v1.PusherService/Push`)
 * and forwards each one to every receiver in `forward_to`. Exports nothing.
 *
 * Reference behaviour kept: `conn_limit` defaults to 16384 and holds extra connections unaccepted
 * instead of refusing them; a new `forward_to` applies to the next request without a restart, and
 * the listener restarts only when the `http` block changes (its gauges then start again); the
 * component is unhealthy only when its configuration cannot be applied (invalid, or the address
 * cannot be bound).
 */
import type { Block } from '../lib/config/ast.js';
import { ConfigError, ConfigErrors } from '../lib/config/errors.js';
import { PROFILES_RECEIVER, type ProfilesReceiver } from '../core/profiles.js';
import { defineComponent, type ComponentArgs, type ComponentContext, type Health } from '../core/runtime/component.js';
import { t } from '../core/schema.js';
import { ManagedListener } from './http/listener.js';
import { httpBlockSpec, resolveHttpConfig, type HttpBlockDefaults, type HttpServerConfig } from './http/schema.js';
import type { RunningHttpServer } from './http/server.js';
import { createProfilesHandler } from './profiles/app.js';
import { connectionGauges } from './profiles/metrics.js';

/** `64 / 4 * 1024` in the reference: its default for this component, not the generic 0. */
export const DEFAULT_CONN_LIMIT = 16_384;
const HTTP_DEFAULTS: HttpBlockDefaults = { listenPort: 8080, connLimit: DEFAULT_CONN_LIMIT };
const NS_PER_MS = 1_000_000n;

export const profilesReceiveHttpComponent = defineComponent({
  name: 'profiles.receive_http',
  doc: 'Receives profiles over HTTP (ingest API and push API) and forwards them to other components.',
  exportNames: [],
  fields: {
    forward_to: { kind: t.list(t.capsule(PROFILES_RECEIVER)), required: true, doc: 'Receivers the profiles go to.' },
    graceful_shutdown_timeout: { kind: t.duration, default: 30_000_000_000n, doc: 'How long stopping waits for requests in flight.' },
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
}

function settingsOf(args: ComponentArgs): Settings {
  try {
    return {
      forwardTo: args.values.forward_to as ProfilesReceiver[],
      http: resolveHttpConfig(args.values.http as Record<string, unknown> | undefined, HTTP_DEFAULTS, args.block as Block, args.path),
      graceMs: Number((args.values.graceful_shutdown_timeout as bigint) / NS_PER_MS),
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

  constructor(args: ComponentArgs, ctx: ComponentContext) {
    this.settings = settingsOf(args);
    const app = createProfilesHandler({ receivers: () => this.settings.forwardTo, log: ctx.log });
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
