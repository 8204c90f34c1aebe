/**
 * The writer behind profiles.write's exported receiver: sends every profile to every endpoint,
 * concurrently, each endpoint retrying on its own schedule.
 *
 * Push path (`append`): labels are checked first (nothing is sent for a bad set), `__`-prefixed
 * labels other than `__name__` and `__delta__` are dropped, external labels override, and the
 * series goes out as a Push request of its own. Ingest path (`appendIngest`): `__name__` takes
 * `service_name`'s value when there is one, the labels are checked, and the body goes to
 * `<endpoint path>/ingest` with the incoming query, its `name` rewritten from the labels.
 *
 * Every attempt runs under the smaller of `remote_timeout` and the caller's time left; retries
 * stop at the caller's deadline. Zero endpoints means every call succeeds without I/O.
 */
import { posix } from 'node:path';
import { create } from '@bufbuild/protobuf';
import { formatLabelSet } from '../../lib/pyroscope/labelset.js';
import { buildLabels, labelValue, type Label, type ProfileLabels } from '../../lib/pyroscope/labels.js';
import { deadlineOf, scopedDeadline } from '../../core/deadline.js';
import { DeadlineExceededError } from '../../lib/go/context-errors.js';
import { encodeQuery, parseQuery } from '../../lib/go/url-query.js';
import { joinErrors, WrappedError } from '../../lib/go/error-chain.js';
import type { IngestProfile, ProfilesReceiver, PushSeries } from '../../core/profiles.js';
import type { Log } from '../../lib/log.js';
import { Backoff, backoffClockOn, type BackoffClock } from '../../lib/backoff.js';
import { type Clock, epochMs, systemClock } from '../../core/clock.js';
import { PushRequestSchema, type PushRequest } from '../../lib/pyroscope/gen/push/v1/push_pb.js';
import type { EndpointConfig, WriteConfig } from './config.js';
import { IngestClient } from './ingest-client.js';
import type { WriteMetrics } from './metrics.js';
import { PushClient } from './push-client.js';
import { pushFailure, shouldRetry } from './retry.js';
import { validateLabels } from './validate.js';

export interface WriterOptions {
  readonly metrics: WriteMetrics;
  /** The User-Agent of Push requests (ingest requests send none, see IngestClient). */
  readonly userAgent: string;
  /** The `X-Alloy-Id` value of every request; empty when absent (Rivulet keeps no agent id). */
  readonly agentId?: string;
  /** The component's clock: attempt deadlines, and retry waits unless `backoff` is given (the real one by default). */
  readonly clock?: Clock;
  /** Paces retries in place of waits on `clock` (tests record the waits asked for). */
  readonly backoff?: BackoffClock;
  readonly log?: Log;
}

interface Endpoint {
  readonly config: EndpointConfig;
  readonly push: PushClient;
  readonly ingest: IngestClient;
}

/** Labels the Push path keeps although they are reserved. */
const KEPT_RESERVED = new Set(['__name__', '__delta__']);

export class ProfilesWriter implements ProfilesReceiver {
  private readonly endpoints: Endpoint[];
  private readonly clock: Clock;
  private readonly backoff: BackoffClock;

  constructor(
    private readonly config: WriteConfig,
    private readonly options: WriterOptions,
  ) {
    this.clock = options.clock ?? systemClock();
    this.backoff = options.backoff ?? backoffClockOn(this.clock.scheduler);
    const agentId = options.agentId ?? '';
    this.endpoints = config.endpoints.map((e) => ({
      config: e,
      push: new PushClient(e, options.userAgent, agentId),
      ingest: new IngestClient(e, agentId),
    }));
  }

  async append(series: PushSeries, signal: AbortSignal): Promise<void> {
    validateLabels(series.labels);
    const request = create(PushRequestSchema, {
      series: [
        {
          labels: this.pushLabels(series.labels),
          samples: series.samples.map((s) => ({ ID: s.id, rawProfile: s.rawProfile })),
        },
      ],
    });
    const bytes = series.samples.reduce((n, s) => n + s.rawProfile.byteLength, 0);
    const done = this.options.metrics.time('-', 'push_total');
    try {
      await this.fanOut('push', bytes, series.samples.length, signal, (endpoint, attemptSignal, timeoutMs) =>
        this.pushOnce(endpoint, request, attemptSignal, timeoutMs, signal),
      );
    } finally {
      done();
    }
  }

  async appendIngest(profile: IngestProfile, signal: AbortSignal): Promise<void> {
    const labels = nameFromServiceName(profile.labels);
    validateLabels(labels);
    const nameLabels = new Map<string, string>();
    for (const { name, value } of [...labels, ...Object.entries(this.config.externalLabels).map(([name, value]) => ({ name, value }))]) {
      if (value === '') nameLabels.delete(name);
      else nameLabels.set(name, value);
    }
    const query = parseQuery(profile.rawQuery);
    query.set('name', [formatLabelSet(nameLabels)]);
    const search = encodeQuery(query);
    const done = this.options.metrics.time('-', 'ingest_total');
    try {
      await this.fanOut('ingest', profile.body.byteLength, 1, signal, (endpoint, attemptSignal) => {
        const url = new URL(endpoint.config.requestUrl);
        url.pathname = joinPath(url.pathname, profile.path);
        url.search = search;
        return endpoint.ingest.send(url, profile.body, profile.contentType, attemptSignal);
      });
    } finally {
      done();
    }
  }

  close(): void {
    for (const e of this.endpoints) {
      e.push.close();
      e.ingest.close();
    }
  }

  private pushLabels(labels: ProfileLabels): Label[] {
    const kept = labels.filter((l) => !l.name.startsWith('__') || KEPT_RESERVED.has(l.name));
    const external = Object.entries(this.config.externalLabels).map(([name, value]) => ({ name, value }));
    return buildLabels([...kept, ...external]);
  }

  private async pushOnce(
    endpoint: Endpoint,
    request: PushRequest,
    attemptSignal: AbortSignal,
    timeoutMs: number,
    callerSignal: AbortSignal,
  ): Promise<void> {
    try {
      // The attempt's signal ends the call at its deadline on the writer's clock (and when the
      // caller gives up); the Connect client's own timer for timeoutMs only backs it up in real time.
      await endpoint.push.push(request, timeoutMs, attemptSignal);
    } catch (err) {
      throw pushFailure(err, callerSignal, attemptSignal.aborted);
    }
  }

  /**
   * Runs `attempt` against every endpoint concurrently with retries, and rejects with every
   * endpoint's final error joined.
   */
  private async fanOut(
    kind: 'push' | 'ingest',
    bytes: number,
    profiles: number,
    signal: AbortSignal,
    attempt: (endpoint: Endpoint, attemptSignal: AbortSignal, timeoutMs: number) => Promise<void>,
  ): Promise<void> {
    const errors: unknown[] = [];
    await Promise.all(
      this.endpoints.map(async (endpoint) => {
        const url = endpoint.config.url;
        const done = this.options.metrics.time(url, kind === 'push' ? 'push_endpoint' : 'ingest_endpoint');
        const backoff = new Backoff(
          { minMs: endpoint.config.minBackoffMs, maxMs: endpoint.config.maxBackoffMs, maxRetries: endpoint.config.maxBackoffRetries },
          this.backoff,
          signal,
        );
        let failure: unknown;
        for (;;) {
          failure = undefined;
          const downstream = this.options.metrics.time(url, kind === 'push' ? 'push_downstream' : 'ingest_downstream');
          const deadline = deadlineOf(signal);
          const nowMs = epochMs(this.clock);
          const timeoutMs = Math.max(0, Math.min(endpoint.config.remoteTimeoutMs, deadline === undefined ? Infinity : deadline - nowMs));
          const attemptDeadline = scopedDeadline(nowMs + timeoutMs, signal, this.clock);
          try {
            if (attemptDeadline.signal.aborted && kind === 'push') throw attemptDeadline.signal.reason;
            await attempt(endpoint, attemptDeadline.signal, timeoutMs);
          } catch (err) {
            failure = kind === 'push' && err instanceof DeadlineExceededError ? pushFailure(err, signal, true) : err;
          } finally {
            attemptDeadline.release();
            downstream();
          }
          if (failure === undefined) {
            this.options.metrics.sent(url, bytes, profiles);
            break;
          }
          this.options.log?.('debug', `failed to ${kind} to endpoint`, {
            endpoint: url,
            retries: backoff.numRetries(),
            err: String((failure as Error).message),
          });
          if (!shouldRetry(failure, endpoint.config.retryOnHttp429)) break;
          await backoff.wait();
          if (!backoff.ongoing()) break;
          this.options.metrics.retry(url);
        }
        done();
        if (failure !== undefined) {
          this.options.metrics.dropped(url, bytes, profiles);
          errors.push(
            new WrappedError(
              `failed to ${kind === 'push' ? 'push' : 'ingest'} to endpoint ${url} (${backoff.numRetries()} retries)`,
              failure,
            ),
          );
        }
      }),
    );
    const joined = joinErrors(errors);
    if (joined) throw joined;
  }
}

/** The ingest path's rule: a non-empty `service_name` also becomes `__name__`. */
function nameFromServiceName(labels: ProfileLabels): ProfileLabels {
  const serviceName = labelValue(labels, 'service_name');
  if (serviceName === '') return labels;
  return buildLabels([...labels, { name: '__name__', value: serviceName }]);
}

/** Joins URL paths the way the reference does: one slash between parts, no trailing slash. */
function joinPath(base: string, path: string): string {
  const joined = posix.join('/', base, path);
  return joined.length > 1 && joined.endsWith('/') ? joined.slice(0, -1) : joined;
}
