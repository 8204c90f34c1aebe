/**
 * What logs.write.jetstream and `jetStreamWrite` run: a writer that publishes entries to a
 * JetStream stream, partitioned by stream (label set), and resolves a send only once JetStream
 * stored every message of it. See logs-write-jetstream.ts for the message layout, the retries and
 * the stream it creates. The writer connects as soon as it is made.
 *
 * Once the stream has been checked, a send is refused at once with a `RetryLaterError` while the
 * connection is down or the stream cannot be written to, and so is a send whose publish failed
 * because the connection dropped: a push source answers its client 429 with `Retry-After` in
 * milliseconds, instead of holding the request until the client gives up. (A refused send may
 * have been stored in part: the client's retry stores it again, at least once.) Before the first
 * check a send waits for it, so a writer just started does not refuse its first batches.
 */
import { randomBytes } from 'node:crypto';
import { jetstreamManager, JetStreamApiCodes, JetStreamApiError, type StreamConfig } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Backoff, backoffClockOn } from '../../lib/backoff.js';
import { encodedEntrySize, encodedLabelsSize, encodeEntryBatch } from '../../lib/jetstream/entry-codec.js';
import { errorText, NatsLink, type NatsConnectionSettings } from '../../lib/jetstream/connection.js';
import { parseLayoutDescription, partitionOf, partitionSubject } from '../../lib/jetstream/partition.js';
import type { FixedSettings } from '../../lib/jetstream/settings-change.js';
import { labelsKey, type Entry } from '../../core/entry.js';
import { RetryLaterError } from '../../core/receiver.js';
import { healthy, unhealthy, type ComponentContext, type Health } from '../../core/runtime/component.js';
import { jetStreamWriteMetrics, type JetStreamWriteMetrics } from './metrics.js';
import { AsyncPublisher, PublishError, type PublishFailure } from './publisher.js';
import { InFlightWindow } from './window.js';

/** How long to wait before checking a missing or mismatched stream again. */
const STREAM_RETRY_MS = 2000;

/** A writer's validated settings (logs.write.jetstream's attributes). */
export interface JetStreamWriteSettings {
  readonly connection: NatsConnectionSettings;
  readonly stream: string;
  readonly prefix: string;
  readonly partitions: number;
  readonly createStream: boolean;
  readonly streamConfig: Partial<StreamConfig> & { name: string };
  readonly maxMessageBytes: number;
  readonly maxInFlight: number;
  readonly publishTimeoutMs: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly maxRetries: number;
}

/** What a running writer cannot change: the connection, the stream and its layout; the rest may. */
export const FIXED_WRITE_SETTINGS: FixedSettings<JetStreamWriteSettings> = {
  of: (s) => [s.connection.fingerprint, s.stream, s.prefix, s.partitions, s.createStream, s.streamConfig],
  refusal: 'the connection, stream, subject_prefix, partitions and stream settings cannot change while the component runs',
};

/** One message to publish: a stream's entries, encoded. */
interface Outgoing {
  readonly subject: string;
  readonly data: Buffer;
  readonly entries: number;
}

/** Publishes entries to the stream; `send` resolves once JetStream stored all of them. */
export class JetStreamWriter {
  private settings: JetStreamWriteSettings;
  private readonly link: NatsLink;
  private publisher: AsyncPublisher | undefined;
  /** Why the stream cannot be written to, while it cannot. */
  private streamProblem: string | undefined = 'checking the stream';
  private streamReady: Promise<void>;
  /** Set once the stream was checked (successfully or not): from then on an outage refuses sends. */
  private checked = false;
  private lastFailure: string | undefined;
  private readonly window: InFlightWindow;
  private readonly metrics: JetStreamWriteMetrics;
  private readonly labels: { component_id: string };
  /** Distinguishes this writer's message ids from every other writer's. */
  private readonly writerId = randomBytes(9).toString('base64url');
  private nextMessage = 0;
  private readonly stopSignal = new AbortController();
  private stopped = false;

  constructor(
    settings: JetStreamWriteSettings,
    private readonly ctx: ComponentContext,
  ) {
    this.settings = settings;
    this.metrics = jetStreamWriteMetrics(ctx.registry);
    this.labels = { component_id: ctx.id };
    this.metrics.inFlightMessages.set(this.labels, 0);
    this.window = new InFlightWindow(this.settings.maxInFlight);
    this.link = new NatsLink({ settings: this.settings.connection, log: ctx.log });
    this.streamReady = this.prepare();
  }

  health(): Health {
    const link = this.link.describe();
    if (!link.up) return unhealthy(link.message);
    if (this.streamProblem !== undefined) return unhealthy(this.streamProblem);
    if (this.lastFailure !== undefined) return unhealthy(this.lastFailure);
    return healthy(
      `publishing to stream ${this.settings.stream} (${this.settings.partitions} partitions) on ${this.settings.connection.display}`,
    );
  }

  /** The settings it runs with. */
  current(): JetStreamWriteSettings {
    return this.settings;
  }

  /** Takes settings `acceptedSettings(FIXED_WRITE_SETTINGS, …)` accepted. */
  update(next: JetStreamWriteSettings): void {
    this.settings = next;
    this.window.resize(next.maxInFlight);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.window.close(new Error('logs.write.jetstream is stopped'));
    // Sends in progress finish (or fail) before the connection goes: they were promised nothing yet.
    this.stopSignal.abort();
    await this.link.close();
    this.publisher?.close();
    this.metrics.inFlightMessages.remove(this.labels);
  }

  /** Publishes the entries; resolves once JetStream stored all of them. */
  async send(entries: readonly Entry[]): Promise<void> {
    if (this.stopped) throw new Error('logs.write.jetstream is stopped');
    if (entries.length === 0) return;
    const refusal = this.unreachable() ?? (this.checked ? this.streamProblem : undefined);
    if (refusal !== undefined) throw new RetryLaterError(`stream ${this.settings.stream} cannot be written to now: ${refusal}`);
    const outgoing = this.encode(entries);
    await this.window.acquire(outgoing.length);
    this.metrics.inFlightMessages.inc(this.labels, outgoing.length);
    try {
      await Promise.all(outgoing.map((message) => this.publishWithRetry(message)));
    } finally {
      this.metrics.inFlightMessages.dec(this.labels, outgoing.length);
      this.window.release(outgoing.length);
    }
  }

  /** One message per stream (in first-seen order), split at max_message_size. */
  private encode(entries: readonly Entry[]): Outgoing[] {
    const { prefix, partitions, maxMessageBytes } = this.settings;
    const byStream = new Map<string, Entry[]>();
    for (const entry of entries) {
      const key = labelsKey(entry.labels);
      const list = byStream.get(key);
      if (list) list.push(entry);
      else byStream.set(key, [entry]);
    }
    const out: Outgoing[] = [];
    for (const [key, list] of byStream) {
      const subject = partitionSubject(prefix, partitionOf(key, partitions));
      const labels = list[0]!.labels;
      const header = encodedLabelsSize(labels) + 5;
      let start = 0;
      let bytes = header;
      for (let i = 0; i < list.length; i++) {
        const size = encodedEntrySize(list[i]!);
        if (i > start && bytes + size > maxMessageBytes) {
          out.push({ subject, data: encodeEntryBatch({ labels, entries: list.slice(start, i) }), entries: i - start });
          start = i;
          bytes = header;
        }
        bytes += size;
      }
      out.push({
        subject,
        data: encodeEntryBatch({ labels, entries: start === 0 ? list : list.slice(start) }),
        entries: list.length - start,
      });
    }
    return out;
  }

  private async publishWithRetry(message: Outgoing): Promise<void> {
    const msgId = `${this.writerId}-${(this.nextMessage++).toString(36)}`;
    const { minBackoffMs, maxBackoffMs, maxRetries } = this.settings;
    const backoffClock = backoffClockOn(this.ctx.clock.scheduler);
    const backoff = new Backoff({ minMs: minBackoffMs, maxMs: maxBackoffMs, maxRetries }, backoffClock);
    for (;;) {
      const publisher = await this.ready();
      try {
        const ack = await publisher.publish(message.subject, message.data, msgId);
        if (ack.duplicate) this.metrics.duplicateMessages.inc(this.labels);
        this.metrics.publishedMessages.inc(this.labels);
        this.metrics.publishedEntries.inc(this.labels, message.entries);
        this.metrics.publishedBytes.inc(this.labels, message.data.length);
        this.lastFailure = undefined;
        return;
      } catch (err) {
        if (this.stopped) throw new Error('logs.write.jetstream stopped before the entries were stored');
        const reason: PublishFailure = err instanceof PublishError ? err.reason : 'rejected';
        const text = errorText(err);
        // The stream went away (a server that lost its memory storage): set it up again.
        if (reason === 'no_stream' && this.streamProblem === undefined) {
          this.streamProblem = text;
          this.streamReady = this.prepare();
        }
        // A publish lost to a dropped connection is not the message's fault: the client retries.
        const down = this.unreachable();
        if (down !== undefined) throw new RetryLaterError(`stream ${this.settings.stream} cannot be written to now: ${down}`);
        const delay = backoff.nextDelay();
        if (!backoff.ongoing()) {
          this.metrics.failedEntries.inc({ ...this.labels, reason }, message.entries);
          this.ctx.log('error', 'giving up publishing entries', { subject: message.subject, entries: message.entries, error: text });
          throw new Error(`publishing to ${message.subject} failed: ${text}`);
        }
        this.lastFailure = `publishing to stream ${this.settings.stream} failed: ${text}; retrying`;
        this.metrics.retriedEntries.inc({ ...this.labels, reason }, message.entries);
        this.ctx.log('warn', 'publishing entries failed, will retry', { subject: message.subject, error: text, retry_in_ms: delay });
        await backoffClock.sleep(delay, this.stopSignal.signal);
      }
    }
  }

  /** Why the connection cannot carry a publish now, once the stream was checked; undefined while it can. */
  private unreachable(): string | undefined {
    if (!this.checked) return undefined;
    const link = this.link.describe();
    return link.up ? undefined : link.message;
  }

  /**
   * The publisher, once connected and the stream is usable. Before the first check it waits (not
   * spending retries); after it, a connection that is down refuses the send.
   */
  private async ready(): Promise<AsyncPublisher> {
    for (;;) {
      if (this.stopped) throw new Error('logs.write.jetstream stopped before the entries were stored');
      const down = this.unreachable();
      if (down !== undefined) throw new RetryLaterError(`stream ${this.settings.stream} cannot be written to now: ${down}`);
      const nc = await this.link.ready();
      if (!nc) throw new Error('logs.write.jetstream stopped before the entries were stored');
      await this.streamReady;
      if (this.publisher && this.link.connection()) return this.publisher;
    }
  }

  /** Connects, then checks (or creates) the stream until it is usable. */
  private async prepare(): Promise<void> {
    for (;;) {
      const nc = await this.link.ready();
      if (!nc) return;
      try {
        await this.checkStream(nc);
        this.checked = true;
        this.streamProblem = undefined;
        this.publisher ??= new AsyncPublisher(nc, this.settings.publishTimeoutMs);
        return;
      } catch (err) {
        const problem = errorText(err);
        if (problem !== this.streamProblem)
          this.ctx.log('error', 'the stream cannot be written to', { stream: this.settings.stream, error: problem });
        this.streamProblem = problem;
        this.checked = true;
      }
      await backoffClockOn(this.ctx.clock.scheduler).sleep(STREAM_RETRY_MS, this.stopSignal.signal);
      if (this.stopped) return;
    }
  }

  private async checkStream(nc: NatsConnection): Promise<void> {
    const { stream, prefix, partitions, createStream, streamConfig } = this.settings;
    const jsm = await jetstreamManager(nc);
    let description: string | undefined;
    try {
      description = (await jsm.streams.info(stream)).config.description;
    } catch (err) {
      if (!(err instanceof JetStreamApiError) || err.code !== JetStreamApiCodes.StreamNotFound) throw err;
      if (!createStream) throw new Error(`stream ${stream} does not exist and create_stream is false`);
      await jsm.streams.add(streamConfig);
      this.ctx.log('info', 'created stream', { stream, subjects: `${prefix}.*`, partitions });
      return;
    }
    const layout = parseLayoutDescription(description);
    if (layout && (layout.partitions !== partitions || layout.prefix !== prefix))
      throw new Error(
        `stream ${stream} was created for ${layout.partitions} partitions under ${layout.prefix}.*, but this writer has ${partitions} under ${prefix}.*`,
      );
  }
}
