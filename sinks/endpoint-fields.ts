/**
 * What the `endpoint` blocks of logs.write and profiles.write decode alike. The reference builds
 * both writers' endpoints on one HTTP client and one retry loop, and these parts keep its rules
 * for both: the timeout and retry attributes with its defaults (remote_timeout 10s, backoff
 * 500ms → 5m, 10 attempts, retry on 429) and their checks, and the URL, whose userinfo is taken
 * off and sent as Basic auth unless something else sets the Authorization header, the rest having
 * to be an http or https URL.
 *
 * Each writer keeps what differs: how a bad URL is worded, its ways to authenticate (and when it
 * reads their files), and where its errors are placed.
 */
import { MAX_TIMER_MS } from '../core/clock.js';
import { t, type FieldSpec, type FieldsValues } from '../lib/config/schema.js';
import { splitUserinfo } from '../lib/redact.js';

/**
 * The timeout and retry attributes. What an attempt gives up on and what a 429 does differ
 * between the writers, so each gives the docs of those two.
 */
export function retryFields(docs: { readonly max_backoff_retries: string; readonly retry_on_http_429: string }) {
  return {
    remote_timeout: { kind: t.durationMs, default: 10_000_000_000n, doc: 'Timeout of each request.' },
    min_backoff_period: { kind: t.durationMs, default: 500_000_000n, doc: 'First delay between retries.' },
    max_backoff_period: { kind: t.durationMs, default: 300_000_000_000n, doc: 'Longest delay between retries.' },
    max_backoff_retries: { kind: t.int, default: 10, doc: docs.max_backoff_retries },
    retry_on_http_429: { kind: t.bool, default: true, doc: docs.retry_on_http_429 },
  } satisfies Record<string, FieldSpec>;
}

/** The decoded timeout and retry attributes. */
export type RetryValues = FieldsValues<ReturnType<typeof retryFields>>;

/** How an endpoint times out and retries. */
export interface RetrySettings {
  readonly remoteTimeoutMs: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  /** Attempts in total; 0 = no limit of its own. */
  readonly maxBackoffRetries: number;
  readonly retryOnHttp429: boolean;
}

/**
 * A duration in milliseconds, at most MAX_TIMER_MS: each of the endpoint's durations arms a timer,
 * and Node fires a longer one at once. 24.8 days is as good as forever for any of them.
 */
export function timerMs(ms: number): number {
  return Math.min(ms, MAX_TIMER_MS);
}

/**
 * The timeout and retry settings of decoded attributes. `fail` reports a value neither writer
 * takes (a timeout of 0, a negative number of attempts), placed as the writer places its errors.
 */
export function retrySettingsOf(values: RetryValues, fail: (reason: string, attribute: string) => void): RetrySettings {
  const settings: RetrySettings = {
    remoteTimeoutMs: timerMs(values.remote_timeout),
    minBackoffMs: timerMs(values.min_backoff_period),
    maxBackoffMs: timerMs(values.max_backoff_period),
    maxBackoffRetries: values.max_backoff_retries,
    retryOnHttp429: values.retry_on_http_429,
  };
  if (settings.remoteTimeoutMs <= 0) fail('remote_timeout must be greater than 0', 'remote_timeout');
  if (settings.maxBackoffRetries < 0) fail('max_backoff_retries must not be negative', 'max_backoff_retries');
  return settings;
}

/** An endpoint's URL as both writers take it. */
export interface EndpointUrl {
  /** Where requests go: the URL as written without its userinfo. */
  readonly requestUrl: string;
  /** Its `host:port`; empty when it does not parse. */
  readonly host: string;
  /** The userinfo, percent-decoded; absent when the URL has none. */
  readonly username?: string;
  readonly password?: string;
  /** Why a writer refuses it: it does not parse, or its scheme is neither http nor https. */
  readonly problem?: 'invalid' | 'scheme';
}

/** The URL written in an endpoint block, its userinfo apart; each writer words its `problem` itself. */
export function endpointUrl(written: string): EndpointUrl {
  const { url: requestUrl, ...userinfo } = splitUserinfo(written);
  let parsed: URL;
  try {
    parsed = new URL(requestUrl);
  } catch {
    return { requestUrl, host: '', ...userinfo, problem: 'invalid' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { requestUrl, host: parsed.host, ...userinfo, problem: 'scheme' };
  return { requestUrl, host: parsed.host, ...userinfo };
}

/**
 * Whether the URL's credentials are sent: Go's client sends them only when nothing else sets the
 * Authorization header, neither a way to authenticate the endpoint has (`authenticated`) nor a
 * header of that name in any case.
 */
export function sendsUrlCredentials(authenticated: boolean, headers: Readonly<Record<string, string>>): boolean {
  return !authenticated && !Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
}
