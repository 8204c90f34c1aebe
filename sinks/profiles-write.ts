/**
 * profiles.write — sends profiles to Pyroscope-compatible servers: Push requests for series, the
 * ingest API for ingest profiles, to every `endpoint` with retries. Exports `receiver`.
 *
 * Reference behaviour kept: `max_backoff_retries` counts attempts; labels are checked before
 * anything is sent; each attempt gets the smaller of `remote_timeout` and the caller's time left,
 * which is also what the next hop is told; a reload replaces the endpoints for later calls while
 * the exported receiver stays the same value.
 */
import { profilesReceiverCapsule, type IngestProfile, type ProfilesReceiver, type PushSeries } from '../core/profiles.js';
import {
  componentOptions,
  defineComponent,
  healthy,
  type ComponentArgs,
  type ComponentContext,
  type Health,
} from '../core/runtime/component.js';
import { profilesSink, type ProfilesSink } from '../core/profile-delivery.js';
import { standaloneContext, type RunOptions } from '../core/runtime/standalone.js';
import { t } from '../lib/config/schema.js';
import { endpointBlockSpec, resolveWriteConfig, type WriteConfig } from './profiles/config.js';
import { WriteMetrics } from './profiles/metrics.js';
import { ProfilesWriter } from './profiles/writer.js';

/**
 * The User-Agent of every Push request. The reference sends its own agent string (`Alloy/<version>`)
 * here; claiming to be Alloy would be untrue, so Rivulet sends its own. Ingest requests send none
 * (see IngestClient).
 */
export const USER_AGENT = 'Rivulet/0.1.0';

export const profilesWriteComponent = defineComponent({
  name: 'profiles.write',
  doc: 'Sends profiles to Pyroscope-compatible endpoints over the push and ingest APIs.',
  example: `profiles.write "pyroscope" {
  endpoint {
    url = "http://localhost:4040"
  }
  external_labels = { cluster = "dev" }
}`,
  exportNames: ['receiver'],
  fields: {
    external_labels: { kind: t.map(t.string), default: {}, doc: 'Labels added to every profile, overriding labels of the same name.' },
  },
  blocks: {
    endpoint: endpointBlockSpec,
    tracing: {
      doc: 'Trace header propagation (accepted for compatibility).',
      fields: {
        jaeger_propagator: { kind: t.bool, default: true, doc: 'Accepted for compatibility.' },
        trace_context_propagator: { kind: t.bool, default: true, doc: 'Accepted for compatibility.' },
      },
    },
  },
  validate: (values, checks) => resolveWriteConfig(values, checks),
  build(args, ctx) {
    return new ProfilesWrite(args, ctx);
  },
});

/** Options given in code, with the component's defaults and checks (the same ConfigError texts). */
function configOfOptions(options: ProfilesWriteOptions, ctx: ComponentContext): WriteConfig {
  return componentOptions(profilesWriteComponent, options, [profilesWriteComponent.name], ctx);
}

/** One `endpoint` of `profilesWrite`, as the config's `endpoint` block writes it. */
export interface ProfilesWriteEndpoint {
  /** Base URL; Push goes to `<url>/push.v1.PusherService/Push`, ingest to `<url path>/ingest`. */
  readonly url: string;
  readonly name?: string;
  /** Timeout of one request, as a Go duration (`"10s"`, the default). */
  readonly remote_timeout?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly min_backoff_period?: string;
  readonly max_backoff_period?: string;
  /** Attempts in total (10 by default); 0 retries until the caller gives up. */
  readonly max_backoff_retries?: number;
  readonly retry_on_http_429?: boolean;
  readonly bearer_token?: string;
  readonly bearer_token_file?: string;
  readonly basic_auth?: {
    readonly username?: string;
    readonly username_file?: string;
    readonly password?: string;
    readonly password_file?: string;
  };
  readonly authorization?: { readonly type?: string; readonly credentials?: string; readonly credentials_file?: string };
  readonly follow_redirects?: boolean;
  /** Any other attribute of the config's `endpoint` block, under its config name. */
  readonly [attribute: string]: unknown;
}

/** The options of `profilesWrite`: profiles.write's attributes and blocks, as a config writes them. */
export interface ProfilesWriteOptions {
  /** The servers profiles go to, each getting every profile. */
  readonly endpoint?: readonly ProfilesWriteEndpoint[];
  /** Labels added to every profile, overriding labels of the same name. */
  readonly external_labels?: Readonly<Record<string, string>>;
  /** Accepted for compatibility, as in a config. */
  readonly tracing?: { readonly jaeger_propagator?: boolean; readonly trace_context_propagator?: boolean };
}

/** A `ProfilesSink` that also takes new options, as a reload gives the component new attributes. */
export interface ProfilesWriteSink extends ProfilesSink {
  /** Sends later profiles with the new options; calls in flight finish with the old ones. */
  update(options: ProfilesWriteOptions): void;
}

/**
 * profiles.write as a sink to use in code: a `ProfilesReceiver` and an Observer of deliveries
 * (`profilesReceiver().subscribe(sink)`) that acknowledges each delivery once every endpoint has
 * taken it, and refuses it with the writer's error otherwise. Counts the component's metrics
 * under `component_id` (the `run.id`, `profiles.write` by default). Invalid options throw the
 * component's ConfigError texts.
 *
 * @example
 * const sink = profilesWrite({ endpoint: [{ url: 'http://pyroscope:4040' }], external_labels: { cluster: 'dev' } });
 * profilesReceiver().subscribe(sink);
 */
export function profilesWrite(options: ProfilesWriteOptions = {}, run?: RunOptions): ProfilesWriteSink {
  const ctx = standaloneContext(profilesWriteComponent.name, run);
  return createProfilesWriteSink(configOfOptions(options, ctx), ctx);
}

/** The sink over a decoded configuration; `update` there takes the options given in code. */
function createProfilesWriteSink(
  initial: WriteConfig,
  ctx: ComponentContext,
): ProfilesWriteSink & { reconfigure(config: WriteConfig): void } {
  const metrics = new WriteMetrics(ctx.registry, ctx.id, ctx.clock);
  const newWriter = (config: WriteConfig) => new ProfilesWriter(config, { metrics, userAgent: USER_AGENT, log: ctx.log, clock: ctx.clock });
  let writer = newWriter(initial);
  // One receiver for the sink's life; it always uses the current writer.
  const receiver: ProfilesReceiver = {
    append: (series: PushSeries, signal: AbortSignal) => writer.append(series, signal),
    appendIngest: (profile: IngestProfile, signal: AbortSignal) => writer.appendIngest(profile, signal),
  };
  const sink = profilesSink(receiver, async () => {
    writer.close();
    await metrics.remove();
  });
  const reconfigure = (config: WriteConfig) => {
    const previous = writer;
    writer = newWriter(config);
    // Calls in flight keep their clients until they finish; idle sockets go now. A real timer:
    // it frees sockets, which live in real time whatever the component's clock says.
    setTimeout(() => previous.close(), 60_000).unref();
  };
  return Object.assign(sink, { reconfigure, update: (next: ProfilesWriteOptions) => reconfigure(configOfOptions(next, ctx)) });
}

/** The component: the sink over the decoded block, exported as its `receiver`. */
export class ProfilesWrite {
  readonly exports;
  private readonly sink: ReturnType<typeof createProfilesWriteSink>;

  constructor(args: ComponentArgs<WriteConfig>, ctx: ComponentContext) {
    this.sink = createProfilesWriteSink(args.values, ctx);
    // The exported value stays the same across reloads.
    const receiver: ProfilesReceiver = { append: this.sink.append, appendIngest: this.sink.appendIngest };
    this.exports = { receiver: profilesReceiverCapsule(receiver) };
  }

  health(): Health {
    return healthy();
  }

  update(args: ComponentArgs<WriteConfig>): void {
    this.sink.reconfigure(args.values);
  }

  stop(): Promise<void> {
    return this.sink.stop();
  }
}
