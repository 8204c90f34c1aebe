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
import { defineComponent, healthy, type ComponentArgs, type ComponentContext, type Health } from '../core/runtime/component.js';
import { t } from '../core/schema.js';
import { backoffClockOn, type BackoffClock } from '../lib/backoff.js';
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
  build(args, ctx) {
    return new ProfilesWrite(args, ctx);
  },
});

function configOf(args: ComponentArgs): WriteConfig {
  return resolveWriteConfig(args.values, args.path, args.block);
}

export class ProfilesWrite {
  readonly exports;
  private writer: ProfilesWriter;
  private readonly metrics: WriteMetrics;
  private readonly clock: BackoffClock;

  constructor(
    args: ComponentArgs,
    private readonly ctx: ComponentContext,
  ) {
    this.metrics = new WriteMetrics(ctx.registry, ctx.id);
    this.clock = backoffClockOn(ctx.clock.scheduler);
    this.writer = this.newWriter(configOf(args));
    // One receiver value for the component's life; it always uses the current writer.
    const receiver: ProfilesReceiver = {
      append: (series: PushSeries, signal: AbortSignal) => this.writer.append(series, signal),
      appendIngest: (profile: IngestProfile, signal: AbortSignal) => this.writer.appendIngest(profile, signal),
    };
    this.exports = { receiver: profilesReceiverCapsule(receiver) };
  }

  health(): Health {
    return healthy();
  }

  update(args: ComponentArgs): void {
    const next = this.newWriter(configOf(args));
    const previous = this.writer;
    this.writer = next;
    // Calls in flight keep their clients until they finish; idle sockets go now.
    setTimeout(() => previous.close(), 60_000).unref();
  }

  async stop(): Promise<void> {
    this.writer.close();
    await this.metrics.remove();
  }

  private newWriter(config: WriteConfig): ProfilesWriter {
    return new ProfilesWriter(config, {
      metrics: this.metrics,
      userAgent: USER_AGENT,
      log: this.ctx.log,
      clock: this.clock,
    });
  }
}
