/**
 * The arguments of profiles.write: `external_labels` and repeated `endpoint` blocks, with the
 * reference's defaults (remote_timeout 10s, backoff 500ms → 5m, 10 attempts, retry on 429) and
 * its HTTP client rules (at most one way to authenticate; credentials in the URL are sent as
 * Basic auth when no other Authorization is configured, and the URL shown hides the password).
 */
import type { Block } from '../../lib/config/ast.js';
import { ConfigError, ConfigErrors } from '../../lib/config/errors.js';
import { MAX_TIMER_MS } from '../../core/clock.js';
import { t, type NestedBlockSpec } from '../../lib/config/schema.js';
import { redactUrl, secretHeaderValues, splitUserinfo } from '../../lib/redact.js';

export type EndpointAuth =
  | { readonly kind: 'none' }
  | {
      readonly kind: 'basic';
      readonly username: string;
      readonly usernameFile: string;
      readonly password: string;
      readonly passwordFile: string;
    }
  | { readonly kind: 'bearer'; readonly token: string; readonly tokenFile: string }
  | { readonly kind: 'authorization'; readonly type: string; readonly credentials: string; readonly credentialsFile: string };

export interface EndpointConfig {
  readonly name: string;
  /** As written, its password (if any) hidden: the `endpoint` label of the metrics and what messages show. */
  readonly url: string;
  /** Where requests go: the URL as written without its userinfo (sent as Basic auth instead). */
  readonly requestUrl: string;
  readonly remoteTimeoutMs: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  /** Attempts in total; 0 = until the caller's deadline. */
  readonly maxBackoffRetries: number;
  readonly retryOnHttp429: boolean;
  /** Ingest requests follow redirects as Go's client does (up to 10); false hands back the 3xx. */
  readonly followRedirects: boolean;
  readonly auth: EndpointAuth;
  /** The credentials known from the config (files are read per request), for hiding in messages. */
  readonly secrets: readonly string[];
}

/**
 * The header carrying the agent's id on every endpoint request (the reference's name, which
 * Pyroscope servers know). The reference fills it from the UID it keeps in its data directory;
 * Rivulet keeps no such id, so the header goes out with an empty value, as the reference's does
 * when it has no UID.
 */
export const AGENT_ID_HEADER = 'X-Alloy-Id';

export interface WriteConfig {
  readonly externalLabels: Readonly<Record<string, string>>;
  readonly endpoints: readonly EndpointConfig[];
}

export const endpointBlockSpec: NestedBlockSpec = {
  doc: 'A server profiles are sent to.',
  multiple: true,
  key: 'endpoint',
  fields: {
    url: {
      kind: t.string,
      required: true,
      doc: 'Base URL; Push goes to `<url>/push.v1.PusherService/Push`, ingest to `<url path>/ingest`.',
    },
    name: { kind: t.string, default: '', doc: 'A name for the endpoint (metrics use the URL).' },
    remote_timeout: { kind: t.duration, default: 10_000_000_000n, doc: 'Timeout of one request.' },
    headers: {
      kind: t.map(t.string),
      default: {},
      doc: 'Headers set on every request. `X-Alloy-Id` is always sent, empty (Rivulet keeps no agent id), over one given here.',
    },
    min_backoff_period: { kind: t.duration, default: 500_000_000n, doc: 'First wait before a retry.' },
    max_backoff_period: { kind: t.duration, default: 300_000_000_000n, doc: 'Longest wait between retries.' },
    max_backoff_retries: { kind: t.int, default: 10, doc: 'Attempts in total (not retries); 0 retries until the caller gives up.' },
    retry_on_http_429: { kind: t.bool, default: true, doc: 'Retry on HTTP 429 and resource_exhausted.' },
    bearer_token: { kind: t.string, default: '', doc: 'Bearer token sent in the Authorization header.' },
    bearer_token_file: { kind: t.string, default: '', doc: 'File holding the bearer token, read for every request.' },
    enable_http2: { kind: t.bool, default: true, doc: 'Accepted for compatibility; requests use HTTP/1.1.' },
    follow_redirects: {
      kind: t.bool,
      default: true,
      doc: 'Ingest requests follow up to 10 redirects (301/302/303 as a GET without body, 307/308 resent as they were); false reports the redirect as the status. Push requests never follow redirects.',
    },
  },
  blocks: {
    basic_auth: {
      doc: 'Basic authentication.',
      fields: {
        username: { kind: t.string, default: '', doc: 'User name.' },
        username_file: { kind: t.string, default: '', doc: 'File holding the user name.' },
        password: { kind: t.string, default: '', doc: 'Password.' },
        password_file: { kind: t.string, default: '', doc: 'File holding the password.' },
      },
    },
    authorization: {
      doc: 'An Authorization header of any type.',
      fields: {
        type: { kind: t.string, default: 'Bearer', doc: 'Authentication type.' },
        credentials: { kind: t.string, default: '', doc: 'Credentials.' },
        credentials_file: { kind: t.string, default: '', doc: 'File holding the credentials.' },
      },
    },
    oauth2: {
      doc: 'OAuth 2 client credentials (not supported here; rejected when used).',
      fields: {
        client_id: { kind: t.string, default: '', doc: 'Client id.' },
        client_secret: { kind: t.string, default: '', doc: 'Client secret.' },
        token_url: { kind: t.string, default: '', doc: 'Token URL.' },
      },
    },
  },
};

const NS_PER_MS = 1_000_000n;
/**
 * A duration in whole milliseconds, at most MAX_TIMER_MS: each one arms a timer, and Node fires a
 * longer one at once. 24.8 days is as good as forever for any of them.
 */
const ms = (ns: unknown) => Math.min(Number((ns as bigint) / NS_PER_MS), MAX_TIMER_MS);

/**
 * Validates decoded values. With the component's `block`, errors point at the endpoint block
 * they concern.
 */
export function resolveWriteConfig(values: Record<string, unknown>, path: readonly string[] = [], componentBlock?: Block): WriteConfig {
  const errors: ConfigError[] = [];
  const endpoints: EndpointConfig[] = [];
  const blocks = (values.endpoint as Record<string, unknown>[] | undefined) ?? [];
  const written = componentBlock?.body.filter((s): s is Block => s.kind === 'block' && s.name === 'endpoint') ?? [];
  blocks.forEach((block, index) => {
    const pos = written[index]?.pos ?? componentBlock?.pos;
    const fail = (reason: string) => errors.push(new ConfigError(reason, pos, [...path, 'endpoint']));
    const asWritten = block.url as string;
    const url = redactUrl(asWritten);
    const userinfo = splitUserinfo(asWritten);
    try {
      const parsed = new URL(userinfo.url);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
        fail(`unsupported scheme in url ${JSON.stringify(url)}: expected http or https`);
    } catch {
      fail(`invalid url ${JSON.stringify(url)}`);
    }
    const headers = (block.headers as Record<string, string> | undefined) ?? {};
    let auth = resolveAuth(block, fail);
    // Go's client sends URL credentials only when nothing else set the Authorization header.
    if (auth.kind === 'none' && userinfo.username !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'authorization'))
      auth = { kind: 'basic', username: userinfo.username, usernameFile: '', password: userinfo.password ?? '', passwordFile: '' };
    const endpoint: EndpointConfig = {
      name: (block.name as string | undefined) ?? '',
      url,
      requestUrl: userinfo.url,
      remoteTimeoutMs: ms(block.remote_timeout ?? 10_000_000_000n),
      headers,
      minBackoffMs: ms(block.min_backoff_period ?? 500_000_000n),
      maxBackoffMs: ms(block.max_backoff_period ?? 300_000_000_000n),
      maxBackoffRetries: (block.max_backoff_retries as number | undefined) ?? 10,
      retryOnHttp429: (block.retry_on_http_429 as boolean | undefined) ?? true,
      followRedirects: (block.follow_redirects as boolean | undefined) ?? true,
      auth,
      secrets: [...(userinfo.password !== undefined ? [userinfo.password] : []), ...authSecrets(auth), ...secretHeaderValues(headers)],
    };
    if (endpoint.remoteTimeoutMs <= 0) fail('remote_timeout must be greater than 0');
    if (endpoint.maxBackoffRetries < 0) fail('max_backoff_retries must not be negative');
    endpoints.push(endpoint);
  });
  if (errors.length > 0) throw new ConfigErrors(errors);
  return { externalLabels: (values.external_labels as Record<string, string> | undefined) ?? {}, endpoints };
}

/** The credentials an auth setting holds itself (not those in files). */
function authSecrets(auth: EndpointAuth): string[] {
  switch (auth.kind) {
    case 'none':
      return [];
    case 'basic':
      return [auth.password];
    case 'bearer':
      return [auth.token];
    case 'authorization':
      return [auth.credentials];
  }
}

function resolveAuth(block: Record<string, unknown>, fail: (reason: string) => void): EndpointAuth {
  const basic = block.basic_auth as Record<string, string> | undefined;
  const authorization = block.authorization as Record<string, string> | undefined;
  const oauth2 = block.oauth2 as Record<string, string> | undefined;
  const token = (block.bearer_token as string | undefined) ?? '';
  const tokenFile = (block.bearer_token_file as string | undefined) ?? '';
  const configured = [basic !== undefined, authorization !== undefined, oauth2 !== undefined, token !== '', tokenFile !== ''].filter(
    Boolean,
  ).length;
  if (configured > 1) {
    fail('at most one of basic_auth, authorization, oauth2, bearer_token & bearer_token_file must be configured');
    return { kind: 'none' };
  }
  if (oauth2) {
    fail('oauth2 is not supported by this writer');
    return { kind: 'none' };
  }
  if (basic) {
    if (basic.password && basic.password_file) fail('at most one of basic_auth password & password_file must be configured');
    if (basic.username && basic.username_file) fail('at most one of basic_auth username & username_file must be configured');
    return {
      kind: 'basic',
      username: basic.username ?? '',
      usernameFile: basic.username_file ?? '',
      password: basic.password ?? '',
      passwordFile: basic.password_file ?? '',
    };
  }
  if (authorization) {
    if (authorization.credentials && authorization.credentials_file)
      fail('at most one of authorization credentials & credentials_file must be configured');
    if ((authorization.type ?? '').toLowerCase() === 'basic') fail(`authorization type cannot be set to "basic", use "basic_auth" instead`);
    return {
      kind: 'authorization',
      type: authorization.type || 'Bearer',
      credentials: authorization.credentials ?? '',
      credentialsFile: authorization.credentials_file ?? '',
    };
  }
  if (token || tokenFile) return { kind: 'bearer', token, tokenFile };
  return { kind: 'none' };
}
