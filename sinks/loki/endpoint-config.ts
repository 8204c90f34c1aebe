/**
 * The `endpoint` block of logs.write: its schema with the reference's defaults and its
 * validation into an `EndpointConfig`. Secrets given as files are read when the config is
 * applied. Credentials in the URL are sent as Basic auth, as the reference's HTTP client sends
 * them, unless basic_auth, a bearer token or an Authorization header is configured; the URL
 * requests go to has them removed.
 */
import { readFileSync } from 'node:fs';
import type { Block } from '../../lib/config/ast.js';
import { ConfigError, ConfigErrors } from '../../lib/config/errors.js';
import { MAX_TIMER_MS } from '../../core/clock.js';
import { t, type NestedBlockSpec, attributePos, byteSize, durationMs, nestedBlocks } from '../../lib/config/schema.js';
import { redactUrl, secretHeaderValues, splitUserinfo, userinfoAuthorization } from '../../lib/redact.js';

export interface EndpointConfig {
  /** Where pushes go: the configured URL without its userinfo. */
  readonly url: string;
  /** The URL's host (`host:port`), the `host` label of the metrics. */
  readonly host: string;
  readonly name: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The whole `Authorization` header value, when basic auth or a bearer token is set. */
  readonly authorization?: string;
  readonly tenantId: string;
  readonly remoteTimeoutMs: number;
  readonly batchWaitMs: number;
  readonly batchSizeBytes: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  /** Attempts in total; 0 = no limit. */
  readonly maxBackoffRetries: number;
  readonly retryOnHttp429: boolean;
  /** Most bytes of lines queued or in flight before `send` waits. */
  readonly capacityBytes: number;
  /** How long stopping keeps trying to deliver what is queued. */
  readonly drainTimeoutMs: number;
  /** Every credential of the endpoint, for hiding in what is logged (see lib/redact.ts). */
  readonly secrets: readonly string[];
}

const basicAuthSpec: NestedBlockSpec = {
  doc: 'HTTP basic authentication.',
  fields: {
    username: { kind: t.string, default: '', doc: 'User name.' },
    password: { kind: t.string, default: '', doc: 'Password. Mutually exclusive with password_file.' },
    password_file: { kind: t.string, default: '', doc: 'File holding the password. Mutually exclusive with password.' },
  },
};

const queueConfigSpec: NestedBlockSpec = {
  doc: 'Bounds what the endpoint holds in memory.',
  fields: {
    capacity: {
      kind: t.string,
      default: '10MiB',
      doc: 'Most bytes of log lines queued or in flight; beyond it the writer pushes back on its senders.',
    },
    drain_timeout: {
      kind: t.duration,
      default: 15_000_000_000n,
      doc: 'How long stopping keeps trying to deliver queued entries before counting them as dropped.',
    },
  },
};

export const endpointBlockSpec: NestedBlockSpec = {
  doc: 'A Loki-compatible push endpoint.',
  multiple: true,
  required: true,
  fields: {
    url: { kind: t.string, required: true, doc: 'Full URL of the push API, e.g. http://loki:3100/loki/api/v1/push.' },
    name: { kind: t.string, default: '', doc: 'Name for logs and metrics; defaults to a hash of the endpoint settings.' },
    headers: { kind: t.map(t.string), default: {}, doc: 'Extra HTTP headers sent with every request.' },
    bearer_token: { kind: t.string, default: '', doc: 'Bearer token sent in the Authorization header.' },
    bearer_token_file: { kind: t.string, default: '', doc: 'File holding the bearer token.' },
    tenant_id: { kind: t.string, default: '', doc: 'Tenant (X-Scope-OrgID) for entries without a __tenant_id__ label.' },
    remote_timeout: { kind: t.duration, default: 10_000_000_000n, doc: 'Timeout of each push request.' },
    batch_wait: {
      kind: t.duration,
      default: 1_000_000_000n,
      doc: 'Longest time an entry waits for its batch to fill before the batch is sent.',
    },
    batch_size: { kind: t.string, default: '1MiB', doc: 'Bytes of lines after which a batch is sent without waiting.' },
    min_backoff_period: { kind: t.duration, default: 500_000_000n, doc: 'First delay between retries.' },
    max_backoff_period: { kind: t.duration, default: 300_000_000_000n, doc: 'Longest delay between retries.' },
    max_backoff_retries: { kind: t.int, default: 10, doc: 'Attempts per batch in total; 0 retries without limit.' },
    retry_on_http_429: { kind: t.bool, default: true, doc: 'Retry batches answered 429; when false they are dropped at once.' },
  },
  blocks: { basic_auth: basicAuthSpec, queue_config: queueConfigSpec },
};

/**
 * A duration in whole milliseconds, at most MAX_TIMER_MS: every one of these arms a timer, and
 * Node fires a longer one at once. 24.8 days is as good as forever for any of them.
 */
function timerMs(ns: unknown): number {
  return Math.min(durationMs(ns), MAX_TIMER_MS);
}

/** Validates the decoded `endpoint` blocks; `block` is the component block, for error positions. */
export function resolveEndpoints(
  values: readonly Record<string, unknown>[],
  block: Block | undefined,
  path: readonly string[],
): EndpointConfig[] {
  const errors: ConfigError[] = [];
  const blocks = nestedBlocks(block, 'endpoint');
  const configs = values.map((v, i) => {
    const where = blocks[i];
    const at = [...path, 'endpoint'];
    const fail = (reason: string, attribute: string, inner?: Block) =>
      errors.push(new ConfigError(reason, attributePos(inner ?? where, attribute), inner ? [...at, inner.name] : at));
    const written = v.url as string;
    const { url, password: urlPassword } = splitUserinfo(written);
    const secrets: string[] = [];
    if (urlPassword !== undefined) secrets.push(urlPassword);
    let host = '';
    try {
      const parsed = new URL(url);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
        fail(`url must use http or https, got ${JSON.stringify(redactUrl(written))}`, 'url');
      host = parsed.host;
    } catch {
      fail(`invalid url ${JSON.stringify(redactUrl(written))}`, 'url');
    }
    const basic = v.basic_auth as Record<string, string> | undefined;
    const basicBlock = nestedBlocks(where, 'basic_auth')[0];
    const bearer = v.bearer_token as string;
    const bearerFile = v.bearer_token_file as string;
    const authCount = [basic !== undefined, bearer !== '', bearerFile !== ''].filter(Boolean).length;
    if (authCount > 1)
      fail(
        'at most one of basic_auth, bearer_token and bearer_token_file may be set',
        bearer !== '' ? 'bearer_token' : 'bearer_token_file',
      );
    let authorization: string | undefined;
    if (bearer !== '') authorization = `Bearer ${bearer}`;
    if (bearerFile !== '') {
      try {
        authorization = `Bearer ${readFileSync(bearerFile, 'utf8').trim()}`;
      } catch (err) {
        fail(`reading bearer_token_file: ${(err as Error).message}`, 'bearer_token_file');
      }
    }
    if (basic) {
      let password = basic.password ?? '';
      if (basic.password !== '' && basic.password_file !== '')
        fail('at most one of password and password_file may be set', 'password_file', basicBlock);
      else if (basic.password_file) {
        try {
          password = readFileSync(basic.password_file, 'utf8').trim();
        } catch (err) {
          fail(`reading password_file: ${(err as Error).message}`, 'password_file', basicBlock);
        }
      }
      authorization = `Basic ${Buffer.from(`${basic.username ?? ''}:${password}`).toString('base64')}`;
      secrets.push(password);
    }
    if (bearer !== '') secrets.push(bearer);
    const headers = v.headers as Record<string, string>;
    secrets.push(...secretHeaderValues(headers));
    // Go's client sends URL credentials only when nothing else set the Authorization header.
    if (authorization === undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'authorization'))
      authorization = userinfoAuthorization(written);
    if (authorization !== undefined) secrets.push(authorization, authorization.replace(/^\S+\s+/, ''));
    const queue = (v.queue_config as Record<string, unknown> | undefined) ?? { capacity: '10MiB', drain_timeout: 15_000_000_000n };
    const queueBlock = nestedBlocks(where, 'queue_config')[0];
    const size = (text: unknown, name: string, inner?: Block, min = 1) => {
      try {
        return byteSize(text as string, name, inner ?? where, inner ? [...at, inner.name] : at, min);
      } catch (err) {
        errors.push(err as ConfigError);
        return 0;
      }
    };
    const minBackoffMs = timerMs(v.min_backoff_period);
    const maxBackoffMs = timerMs(v.max_backoff_period);
    if (minBackoffMs <= 0) fail('min_backoff_period must be greater than 0', 'min_backoff_period');
    if (maxBackoffMs < minBackoffMs) fail('max_backoff_period must not be less than min_backoff_period', 'max_backoff_period');
    if ((v.max_backoff_retries as number) < 0) fail('max_backoff_retries must not be negative', 'max_backoff_retries');
    const remoteTimeoutMs = timerMs(v.remote_timeout);
    if (remoteTimeoutMs <= 0) fail('remote_timeout must be greater than 0', 'remote_timeout');
    const batchWaitMs = timerMs(v.batch_wait);
    if (batchWaitMs < 0) fail('batch_wait must not be negative', 'batch_wait');
    const config: EndpointConfig = {
      url,
      host,
      name: v.name as string,
      headers,
      ...(authorization !== undefined ? { authorization } : {}),
      tenantId: v.tenant_id as string,
      remoteTimeoutMs,
      batchWaitMs,
      batchSizeBytes: size(v.batch_size, 'batch_size'),
      minBackoffMs,
      maxBackoffMs,
      maxBackoffRetries: v.max_backoff_retries as number,
      retryOnHttp429: v.retry_on_http_429 as boolean,
      capacityBytes: size(queue.capacity, 'capacity', queueBlock),
      drainTimeoutMs: timerMs(queue.drain_timeout),
      secrets,
    };
    return config;
  });
  if (errors.length > 0) throw new ConfigErrors(errors);
  return configs;
}
