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
import type { Block } from '../core/config/ast';
import { ConfigError, ConfigErrors } from '../core/errors';
import { PROFILES_RECEIVER, type ProfilesReceiver } from '../core/profiles';
import { defineComponent, healthy, unhealthy, type ComponentArgs, type ComponentContext, type Health } from '../core/runtime/component';
import { t } from '../core/schema';
import { httpBlockSpec, resolveHttpConfig, sameHttpConfig, type HttpBlockDefaults, type HttpServerConfig } from './http/schema';
import { startHttpServer, type RunningHttpServer } from './http/server';
import { createProfilesApp } from './profiles/app';
import { ConnectionGauges } from './profiles/metrics';

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
  private server: RunningHttpServer | undefined;
  private state: Health = healthy();
  /** Listener starts and stops run one after another, in the order updates asked for them. */
  private transition: Promise<void> = Promise.resolve();
  private started = false;
  /** Bumped per listener, so a closing listener's late connection counts are ignored. */
  private generation = 0;
  private readonly gauges: ConnectionGauges;
  private readonly app;

  constructor(
    args: ComponentArgs,
    private readonly ctx: ComponentContext,
  ) {
    this.settings = settingsOf(args);
    this.gauges = new ConnectionGauges(ctx.registry, ctx.id);
    this.app = createProfilesApp({ receivers: () => this.settings.forwardTo, log: ctx.log }).callback();
  }

  health(): Health {
    return this.state;
  }

  async start(): Promise<void> {
    this.started = true;
    await this.restart(this.settings.http);
  }

  update(args: ComponentArgs): void {
    const next = settingsOf(args);
    const previous = this.settings;
    this.settings = next;
    if (this.started && (!this.server || !sameHttpConfig(previous.http, next.http))) void this.restart(next.http);
    else if (this.server) this.state = healthy();
  }

  /** Resolves once every listener change asked for so far has happened (or failed). */
  settled(): Promise<void> {
    return this.transition;
  }

  /** The running listener's base URL, e.g. `http://127.0.0.1:4040`. */
  url(): string | undefined {
    return this.server?.url;
  }

  async stop(): Promise<void> {
    this.started = false;
    this.transition = this.transition.then(() => this.closeServer());
    await this.transition;
    this.gauges.remove();
  }

  private restart(http: HttpServerConfig): Promise<void> {
    this.transition = this.transition.then(async () => {
      await this.closeServer();
      if (!this.started) return;
      try {
        const generation = ++this.generation;
        this.gauges.reset(http.connLimit);
        this.server = await startHttpServer(http, this.app, {
          onConnections: (n) => {
            if (generation === this.generation) this.gauges.connections(n);
          },
          onAcceptError: (err) => this.ctx.log('warn', 'failed to accept a connection', { err: err.message }),
        });
        this.state = healthy();
        this.ctx.log('info', 'now listening for http traffic', { addr: this.server.url });
      } catch (err) {
        const message = `failed to start server: ${(err as Error).message}`;
        this.state = unhealthy(message);
        this.ctx.log('error', message);
      }
    });
    return this.transition;
  }

  private async closeServer(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.generation++;
    if (server) await server.close(this.settings.graceMs);
  }
}
