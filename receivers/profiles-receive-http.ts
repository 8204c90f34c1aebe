/**
 * profiles.receive_http — an HTTP server that accepts profiles on the legacy ingest API
 * (`POST /ingest`) and the Connect/gRPC/gRPC-Web push API (`POST /push.v1.PusherService/Push`)
 * and forwards each one to every receiver in `forward_to`. Exports nothing. Built on the source
 * `profilesReceiver` gives a program (receivers/profiles/source.ts): the component serves that
 * source's routes on its own listener and forwards each delivery (one Push series or one ingest
 * profile) to every `forward_to` receiver at once, each taking a Push's series in order.
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
import { PROFILES_RECEIVER, type ProfilesReceiver } from '../core/profiles.js';
import { defineComponent, type ComponentArgs, type ComponentContext, type Health } from '../core/runtime/component.js';
import { forwardProfiles } from '../core/profile-delivery.js';
import { standaloneContext, type RunOptions } from '../core/runtime/standalone.js';
import { decodeOptions, t, type FieldSpec, type FieldsValues } from '../lib/config/schema.js';
import { ManagedListener } from './http/listener.js';
import { httpBlockSpec, resolveHttpConfig, type HttpBlockDefaults, type HttpServerConfig } from './http/schema.js';
import type { RunningHttpServer } from './http/server.js';
import { createProfilesHttpSource, type ProfilesHttpSource, type ProfilesSource, type SourceSettings } from './profiles/source.js';
import { connectionGauges } from './profiles/metrics.js';

export type { ProfilesSource } from './profiles/source.js';

/** `64 / 4 * 1024` in the reference: its default for this component, not the generic 0. */
export const DEFAULT_CONN_LIMIT = 16_384;
const HTTP_DEFAULTS: HttpBlockDefaults = { listenPort: 8080, connLimit: DEFAULT_CONN_LIMIT };
/**
 * 4 times the largest profile a Pyroscope server accepts by default (4 MiB): nothing it would take
 * is refused here, while a runaway upload stops well short of hurting the process.
 */
export const DEFAULT_MAX_BODY_SIZE = '16MiB';
/** Eight bodies of the largest size at once; profiles are usually tens of KiB. */
export const DEFAULT_MAX_PENDING_SIZE = '128MiB';

/** The attributes the programmatic source shares with the component (all but `forward_to` and `http`). */
const SOURCE_FIELDS = {
  graceful_shutdown_timeout: { kind: t.durationMs, default: 30_000_000_000n, doc: 'How long stopping waits for requests in flight.' },
  max_body_size: {
    kind: t.bytes,
    default: DEFAULT_MAX_BODY_SIZE,
    doc: 'Largest request body accepted, before and after gzip is undone; larger ones are answered 413 (resource_exhausted on Push). 0: no limit.',
  },
  max_pending_size: {
    kind: t.bytes,
    default: DEFAULT_MAX_PENDING_SIZE,
    doc: 'Most body bytes held at once by requests being read or forwarded; a request beyond it is answered 429 (resource_exhausted on Push). 0: no limit.',
  },
} satisfies Record<string, FieldSpec>;

export const profilesReceiveHttpComponent = defineComponent({
  name: 'profiles.receive_http',
  doc: 'Receives profiles over HTTP (ingest API and push API) and forwards them to other components.',
  exportNames: [],
  fields: {
    forward_to: { kind: t.list(t.capsule<ProfilesReceiver>(PROFILES_RECEIVER)), required: true, doc: 'Receivers the profiles go to.' },
    ...SOURCE_FIELDS,
  },
  blocks: { http: httpBlockSpec(HTTP_DEFAULTS) },
  validate: (values, checks): Settings => ({
    forwardTo: values.forward_to,
    http: checks.attempt(() => resolveHttpConfig(values.http, HTTP_DEFAULTS, checks.block, checks.path), undefined)!,
    source: sourceSettingsOf(values),
  }),
  build(args, ctx) {
    return new ProfilesReceiveHttp(args, ctx);
  },
});

/**
 * The options of `profilesReceiver`: profiles.receive_http's attributes but `forward_to` (the
 * subscriber is the destination) and the `http` block (the program serves the routes), written
 * as a config writes them.
 */
export interface ProfilesReceiverOptions {
  /** How long `stop()` waits for the requests being served, as a Go duration (`"30s"`, the default). */
  readonly graceful_shutdown_timeout?: string;
  /** Largest request body, before and after gzip is undone (`"16MiB"`, the default; `"0"`: no limit). */
  readonly max_body_size?: string;
  /** Most body bytes all requests hold at once (`"128MiB"`, the default; `"0"`: no limit). */
  readonly max_pending_size?: string;
}

interface Settings {
  readonly forwardTo: readonly ProfilesReceiver[];
  readonly http: HttpServerConfig;
  readonly source: SourceSettings;
}

/** What the source runs on, from the decoded attributes it shares with the component. */
function sourceSettingsOf(values: FieldsValues<typeof SOURCE_FIELDS>): SourceSettings {
  return { graceMs: values.graceful_shutdown_timeout, maxBodyBytes: values.max_body_size, maxPendingBytes: values.max_pending_size };
}

/** Options given in code, with the component's defaults and checks (the same ConfigError texts). */
function optionSettingsOf(options: ProfilesReceiverOptions): SourceSettings {
  return sourceSettingsOf(decodeOptions({ fields: SOURCE_FIELDS }, options, [profilesReceiveHttpComponent.name]));
}

/** A `ProfilesSource` that also takes new options, as a reload gives the component new attributes. */
export interface ReconfigurableProfilesSource extends ProfilesSource {
  /** Applies new options to the requests that start from now on; throws ConfigError as the factory does. */
  update(options: ProfilesReceiverOptions): void;
}

/**
 * The profiles receiver as a source to use in code: subscribe to get every Push series and
 * ingest profile as a `ProfileDelivery`, mount `middleware()` (or `router`) in a Koa app to serve
 * `POST /ingest` and `POST /push.v1.PusherService/Push`. A request is answered only once its
 * deliveries are answered: `ack` gives the success answer, `nack` the answer profiles.receive_http
 * gives for a failing receiver (Push `internal`, listing each series; ingest 500, or the
 * downstream status a `RemoteStatusError` carries). Bodies are bounded as the component bounds
 * them. Invalid options throw the component's ConfigError texts.
 *
 * @example
 * const profiles = profilesReceiver();
 * profiles.subscribe((d) => (d.kind === 'push' ? store(d.series) : storeIngest(d.profile)).then(d.ack, d.nack));
 * const app = new Koa().use(profiles.middleware());
 */
export function profilesReceiver(options: ProfilesReceiverOptions = {}, run?: RunOptions): ReconfigurableProfilesSource {
  const ctx = standaloneContext(profilesReceiveHttpComponent.name, run);
  const created = createProfilesHttpSource(optionSettingsOf(options), ctx);
  const source = created.source as ReconfigurableProfilesSource;
  source.update = (next) => created.configure(optionSettingsOf(next));
  return source;
}

/**
 * The component: the source's handler on a managed listener (conn_limit, TLS, gauges), the
 * source's deliveries forwarded to every `forward_to` receiver (the list read for every delivery,
 * so a reload applies to the next one). Stopping closes the listener (requests in flight get the
 * grace period) and then lets go of the source.
 */
export class ProfilesReceiveHttp {
  readonly exports = {};
  private settings: Settings;
  private readonly listener: ManagedListener;
  private readonly source: ProfilesHttpSource;
  private readonly stopForwarding: () => void;

  constructor(args: ComponentArgs<Settings>, ctx: ComponentContext) {
    this.settings = args.values;
    this.source = createProfilesHttpSource(this.settings.source, ctx);
    this.stopForwarding = forwardProfiles(this.source.source, () => this.settings.forwardTo);
    this.listener = new ManagedListener(this.settings.http, {
      handler: this.source.handler,
      log: ctx.log,
      graceMs: () => this.settings.source.graceMs,
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

  update(args: ComponentArgs<Settings>): void {
    const next = args.values;
    this.settings = next;
    this.source.configure(next.source);
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
    // The listener has waited out the requests it served; deliveries still out are answered to no one.
    this.stopForwarding();
  }
}
