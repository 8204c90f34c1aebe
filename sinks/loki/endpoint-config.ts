/**
 * The `endpoint` block of logs.write: its schema with the reference's defaults and its
 * validation into an `EndpointConfig`. Secrets given as files are read when the config is
 * applied. Credentials in the URL are sent as Basic auth, as the reference's HTTP client sends
 * them, unless basic_auth, a bearer token or an Authorization header is configured; the URL
 * requests go to has them removed.
 */
import { readFileSync } from 'node:fs';
import type { Block } from '../../lib/config/ast.js';
import { ConfigError } from '../../lib/config/errors.js';
import {
  attributePos,
  decodeOptions,
  nestedBlocks,
  t,
  type BlockValues,
  type Checks,
  type NestedBlockSpec,
} from '../../lib/config/schema.js';
import { redactUrl, secretHeaderValues, userinfoAuthorization } from '../../lib/redact.js';
import { endpointUrl, retryFields, retrySettingsOf, sendsUrlCredentials, timerMs, type RetrySettings } from '../endpoint-fields.js';

export interface EndpointConfig extends RetrySettings {
  /** Where pushes go: the configured URL without its userinfo. */
  readonly url: string;
  /** The URL's host (`host:port`), the `host` label of the metrics. */
  readonly host: string;
  readonly name: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The whole `Authorization` header value, when basic auth or a bearer token is set. */
  readonly authorization?: string;
  readonly tenantId: string;
  readonly batchWaitMs: number;
  readonly batchSizeBytes: number;
  /** Most bytes of lines queued or in flight before `send` waits. */
  readonly capacityBytes: number;
  /** How long stopping keeps trying to deliver what is queued. */
  readonly drainTimeoutMs: number;
  /** Every credential of the endpoint, for hiding in what is logged (see lib/redact.ts). */
  readonly secrets: readonly string[];
}

const basicAuthSpec = {
  doc: 'HTTP basic authentication.',
  fields: {
    username: { kind: t.string, default: '', doc: 'User name.' },
    password: { kind: t.string, default: '', doc: 'Password. Mutually exclusive with password_file.' },
    password_file: { kind: t.string, default: '', doc: 'File holding the password. Mutually exclusive with password.' },
  },
} satisfies NestedBlockSpec;

const queueConfigSpec = {
  doc: 'Bounds what the endpoint holds in memory.',
  fields: {
    capacity: {
      kind: t.bytes,
      min: 1,
      default: '10MiB',
      doc: 'Most bytes of log lines queued or in flight; beyond it the writer pushes back on its senders.',
    },
    drain_timeout: {
      kind: t.durationMs,
      default: 15_000_000_000n,
      doc: 'How long stopping keeps trying to deliver queued entries before counting them as dropped.',
    },
  },
} satisfies NestedBlockSpec;

/** What an endpoint without a `queue_config` block holds: the block's defaults. */
const QUEUE_DEFAULTS = decodeOptions(queueConfigSpec, {}, []);

export const endpointBlockSpec = {
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
    batch_wait: {
      kind: t.durationMs,
      default: 1_000_000_000n,
      doc: 'Longest time an entry waits for its batch to fill before the batch is sent.',
    },
    batch_size: { kind: t.bytes, min: 1, default: '1MiB', doc: 'Bytes of lines after which a batch is sent without waiting.' },
    ...retryFields({
      max_backoff_retries: 'Attempts per batch in total; 0 retries without limit.',
      retry_on_http_429: 'Retry batches answered 429; when false they are dropped at once.',
    }),
  },
  blocks: { basic_auth: basicAuthSpec, queue_config: queueConfigSpec },
} satisfies NestedBlockSpec;

/** A decoded `endpoint` block. */
export type EndpointValues = BlockValues<typeof endpointBlockSpec>;

/**
 * Validates the decoded `endpoint` blocks, reporting each problem at its attribute in the endpoint
 * block (or its `basic_auth` block) that has it.
 */
export function resolveEndpoints(values: readonly EndpointValues[], checks: Checks): EndpointConfig[] {
  const blocks = nestedBlocks(checks.block, 'endpoint');
  const at = [...checks.path, 'endpoint'];
  return values.map((v, i) => {
    const where = blocks[i];
    const fail = (reason: string, attribute: string, inner?: Block) =>
      checks.report(new ConfigError(reason, attributePos(inner ?? where, attribute), inner ? [...at, inner.name] : at));
    const url = endpointUrl(v.url);
    if (url.problem === 'invalid') fail(`invalid url ${JSON.stringify(redactUrl(v.url))}`, 'url');
    if (url.problem === 'scheme') fail(`url must use http or https, got ${JSON.stringify(redactUrl(v.url))}`, 'url');
    const secrets: string[] = [];
    if (url.password !== undefined) secrets.push(url.password);
    const basic = v.basic_auth;
    const bearer = v.bearer_token;
    const bearerFile = v.bearer_token_file;
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
        fail(`reading bearer_token_file: ${err instanceof Error ? err.message : String(err)}`, 'bearer_token_file');
      }
    }
    if (basic) {
      const basicBlock = nestedBlocks(where, 'basic_auth')[0];
      let password = basic.password;
      if (basic.password !== '' && basic.password_file !== '')
        fail('at most one of password and password_file may be set', 'password_file', basicBlock);
      else if (basic.password_file !== '') {
        try {
          password = readFileSync(basic.password_file, 'utf8').trim();
        } catch (err) {
          fail(`reading password_file: ${err instanceof Error ? err.message : String(err)}`, 'password_file', basicBlock);
        }
      }
      authorization = `Basic ${Buffer.from(`${basic.username}:${password}`).toString('base64')}`;
      secrets.push(password);
    }
    if (bearer !== '') secrets.push(bearer);
    const headers = v.headers;
    secrets.push(...secretHeaderValues(headers));
    if (sendsUrlCredentials(authorization !== undefined, headers)) authorization = userinfoAuthorization(v.url);
    if (authorization !== undefined) secrets.push(authorization, authorization.replace(/^\S+\s+/, ''));
    const retry = retrySettingsOf(v, fail);
    if (retry.minBackoffMs <= 0) fail('min_backoff_period must be greater than 0', 'min_backoff_period');
    if (retry.maxBackoffMs < retry.minBackoffMs) fail('max_backoff_period must not be less than min_backoff_period', 'max_backoff_period');
    const batchWaitMs = timerMs(v.batch_wait);
    if (batchWaitMs < 0) fail('batch_wait must not be negative', 'batch_wait');
    const queue = v.queue_config ?? QUEUE_DEFAULTS;
    return {
      url: url.requestUrl,
      host: url.host,
      name: v.name,
      headers,
      ...(authorization !== undefined ? { authorization } : {}),
      tenantId: v.tenant_id,
      batchWaitMs,
      batchSizeBytes: v.batch_size,
      ...retry,
      capacityBytes: queue.capacity,
      drainTimeoutMs: timerMs(queue.drain_timeout),
      secrets,
    };
  });
}
