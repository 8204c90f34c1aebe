/**
 * The arguments of profiles.write: `external_labels` and repeated `endpoint` blocks, with the
 * reference's defaults (remote_timeout 10s, backoff 500ms → 5m, 10 attempts, retry on 429) and
 * its HTTP client rules (at most one way to authenticate; credentials in the URL are sent as
 * Basic auth when no other Authorization is configured, and the URL shown hides the password).
 */
import { ConfigError } from '../../lib/config/errors.js';
import { nestedBlocks, t, type BlockValues, type Checks, type NestedBlockSpec } from '../../lib/config/schema.js';
import { redactUrl, secretHeaderValues } from '../../lib/redact.js';
import { endpointUrl, retryFields, retrySettingsOf, sendsUrlCredentials, type RetrySettings } from '../endpoint-fields.js';

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

export interface EndpointConfig extends RetrySettings {
  readonly name: string;
  /** As written, its password (if any) hidden: the `endpoint` label of the metrics and what messages show. */
  readonly url: string;
  /** Where requests go: the URL as written without its userinfo (sent as Basic auth instead). */
  readonly requestUrl: string;
  readonly headers: Readonly<Record<string, string>>;
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

export const endpointBlockSpec = {
  doc: 'A server profiles are sent to.',
  multiple: true,
  fields: {
    url: {
      kind: t.string,
      required: true,
      doc: 'Base URL; Push goes to `<url>/push.v1.PusherService/Push`, ingest to `<url path>/ingest`.',
    },
    name: { kind: t.string, default: '', doc: 'A name for the endpoint (metrics use the URL).' },
    headers: {
      kind: t.map(t.string),
      default: {},
      doc: 'Headers set on every request. `X-Alloy-Id` is always sent, empty (Rivulet keeps no agent id), over one given here.',
    },
    ...retryFields({
      max_backoff_retries: 'Attempts in total (not retries); 0 retries until the caller gives up.',
      retry_on_http_429: 'Retry on HTTP 429 and resource_exhausted.',
    }),
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
} satisfies NestedBlockSpec;

/** A decoded `endpoint` block. */
export type EndpointValues = BlockValues<typeof endpointBlockSpec>;

/**
 * Validates decoded values. Each error is placed at the endpoint block it concerns, as the
 * reference places what the validation of a block finds.
 */
export function resolveWriteConfig(
  values: { readonly external_labels: Readonly<Record<string, string>>; readonly endpoint: readonly EndpointValues[] },
  checks: Checks,
): WriteConfig {
  const written = nestedBlocks(checks.block, 'endpoint');
  const endpoints = values.endpoint.map((block, index): EndpointConfig => {
    const pos = written[index]?.pos ?? checks.block?.pos;
    const fail = (reason: string) => checks.report(new ConfigError(reason, pos, [...checks.path, 'endpoint']));
    const url = redactUrl(block.url);
    const parsed = endpointUrl(block.url);
    if (parsed.problem === 'invalid') fail(`invalid url ${JSON.stringify(url)}`);
    if (parsed.problem === 'scheme') fail(`unsupported scheme in url ${JSON.stringify(url)}: expected http or https`);
    const headers = block.headers;
    let auth = resolveAuth(block, fail);
    if (parsed.username !== undefined && sendsUrlCredentials(auth.kind !== 'none', headers))
      auth = { kind: 'basic', username: parsed.username, usernameFile: '', password: parsed.password ?? '', passwordFile: '' };
    const retry = retrySettingsOf(block, fail);
    return {
      name: block.name,
      url,
      requestUrl: parsed.requestUrl,
      headers,
      ...retry,
      followRedirects: block.follow_redirects,
      auth,
      secrets: [...(parsed.password !== undefined ? [parsed.password] : []), ...authSecrets(auth), ...secretHeaderValues(headers)],
    };
  });
  return { externalLabels: values.external_labels, endpoints };
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

function resolveAuth(block: EndpointValues, fail: (reason: string) => void): EndpointAuth {
  const { basic_auth: basic, authorization, oauth2, bearer_token: token, bearer_token_file: tokenFile } = block;
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
      username: basic.username,
      usernameFile: basic.username_file,
      password: basic.password,
      passwordFile: basic.password_file,
    };
  }
  if (authorization) {
    if (authorization.credentials && authorization.credentials_file)
      fail('at most one of authorization credentials & credentials_file must be configured');
    if (authorization.type.toLowerCase() === 'basic') fail(`authorization type cannot be set to "basic", use "basic_auth" instead`);
    return {
      kind: 'authorization',
      type: authorization.type || 'Bearer',
      credentials: authorization.credentials,
      credentialsFile: authorization.credentials_file,
    };
  }
  if (token || tokenFile) return { kind: 'bearer', token, tokenFile };
  return { kind: 'none' };
}
