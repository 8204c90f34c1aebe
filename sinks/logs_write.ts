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
 */
import type { Block } from '../lib/config/ast.js';
import { ConfigError, ConfigErrors } from '../lib/config/errors.js';
import type { Entry, Labels } from '../core/entry.js';
import { cloneEntry } from '../core/entry.js';
import { logsReceiverCapsule, type LogsReceiver } from '../core/receiver.js';
import { defineComponent, healthy, type ComponentArgs, type ComponentContext, type Health } from '../core/runtime/component.js';
import { t } from '../core/schema.js';
import { endpointBlockSpec, resolveEndpoints, type EndpointConfig } from './loki/endpoint_config.js';
import { EndpointQueue } from './loki/endpoint_queue.js';
import { writeMetrics, type WriteMetrics } from './loki/metrics.js';
import { fetchTransport, type PushTransport } from './loki/transport.js';

const USER_AGENT = 'Rivulet/0.1.0';

export const logsWriteComponent = defineComponent({
  name: 'logs.write',
  doc: 'Sends log entries to Loki-compatible push endpoints in batches, with retries and backpressure.',
  exportNames: ['receiver'],
  fields: {
    external_labels: { kind: t.map(t.string), default: {}, doc: 'Labels added to every stream sent; an entry’s own labels win.' },
  },
  blocks: { endpoint: endpointBlockSpec },
  build(args, ctx) {
    return new LogsWrite(args, ctx);
  },
});

interface Settings {
  readonly endpoints: readonly EndpointConfig[];
  readonly externalLabels: Labels;
}

function settingsOf(args: ComponentArgs): Settings {
  try {
    return {
      endpoints: resolveEndpoints(args.values.endpoint as Record<string, unknown>[], args.block as Block, args.path),
      externalLabels: args.values.external_labels as Labels,
    };
  } catch (err) {
    if (err instanceof ConfigErrors || err instanceof ConfigError) throw err;
    throw new ConfigError((err as Error).message, args.block.pos, args.path);
  }
}

/** Options for tests: a transport other than fetch and a fixed backoff jitter. */
export interface LogsWriteTestHooks {
  readonly transport?: PushTransport;
  readonly random?: () => number;
}

export class LogsWrite {
  readonly exports;
  private settings: Settings;
  private queues: EndpointQueue[];
  private readonly metrics: WriteMetrics;
  private stopped = false;

  constructor(
    args: ComponentArgs,
    private readonly ctx: ComponentContext,
    private readonly hooks: LogsWriteTestHooks = {},
  ) {
    this.settings = settingsOf(args);
    this.metrics = writeMetrics(ctx.registry);
    this.queues = this.settings.endpoints.map((config) => this.newQueue(config));
    const receiver: LogsReceiver = { send: (entries) => this.send(entries) };
    this.exports = { receiver: logsReceiverCapsule(receiver) };
  }

  health(): Health {
    return healthy();
  }

  update(args: ComponentArgs): void {
    const next = settingsOf(args);
    const previous = this.settings;
    this.settings = next;
    if (JSON.stringify(previous.endpoints) === JSON.stringify(next.endpoints)) return;
    // Replaced endpoints drain in the background; their successors start sending once they are
    // done, so no stream's entries overtake each other across the switch.
    const old = this.queues;
    const drained = Promise.all(old.map((q) => q.stop())).then(() => undefined);
    this.queues = next.endpoints.map((config) => this.newQueue(config, drained));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.queues.map((q) => q.stop()));
  }

  /** Queues the entries at every endpoint (each its own copy); resolves once all have them. */
  private async send(entries: readonly Entry[]): Promise<void> {
    if (this.stopped) throw new Error('logs.write is stopped');
    if (entries.length === 0) return;
    const queues = this.queues;
    await Promise.all(queues.map((q, i) => q.enqueue(i === queues.length - 1 ? entries : entries.map(cloneEntry))));
  }

  private newQueue(config: EndpointConfig, after?: Promise<void>): EndpointQueue {
    return new EndpointQueue({
      config,
      componentId: this.ctx.id,
      externalLabels: () => this.settings.externalLabels,
      clock: this.ctx.clock,
      metrics: this.metrics,
      transport: this.hooks.transport ?? fetchTransport,
      log: this.ctx.log,
      userAgent: USER_AGENT,
      ...(this.hooks.random ? { random: this.hooks.random } : {}),
      ...(after ? { after } : {}),
    });
  }
}
