/**
 * The NATS connection settings shared by logs.write.jetstream and logs.source.jetstream: their
 * attribute and `tls` block schema, the validation that turns decoded values into
 * `NatsConnectionSettings`, and `NatsLink`, which keeps one connection up for a component.
 *
 * Secrets (token, password, the creds file's content, a password in the URL) live only in the
 * settings object handed to the client: what is shown — health messages, logs, errors — names
 * servers by `displayServers`, without user information.
 */
import { readFileSync } from 'node:fs';
import { connect, credsAuthenticator, type ConnectionOptions, type NatsConnection, type Status } from '@nats-io/transport-node';
import type { Block } from '../config/ast.js';
import { nestedBlocks, t, type BlockValues, type Checks, type FieldSpec, type FieldsValues } from '../config/schema.js';

/** The `tls` block of a NATS client. */
export const natsTlsBlockSpec = {
  doc: 'TLS for the connection to NATS. Without it the client still upgrades when the server asks for TLS.',
  fields: {
    ca_file: { kind: t.string, default: '', doc: 'PEM file of the certificate authorities that sign the server certificate.' },
    cert_file: { kind: t.string, default: '', doc: 'PEM file of the client certificate, for servers that verify clients.' },
    key_file: { kind: t.string, default: '', doc: 'PEM file of the client certificate’s private key.' },
    server_name: { kind: t.string, default: '', doc: 'Name the server certificate must carry; defaults to the URL’s host.' },
    insecure_skip_verify: { kind: t.bool, default: false, doc: 'Accept any server certificate (tests only).' },
    handshake_first: { kind: t.bool, default: false, doc: 'Start TLS before the NATS greeting (servers with `handshake_first`).' },
  } satisfies Record<string, FieldSpec>,
};

/** The connection attributes every NATS component has. */
export const natsConnectionFields = {
  url: {
    kind: t.string,
    required: true,
    doc: 'NATS server URL, e.g. nats://nats:4222; several separated by commas.',
  },
  name: { kind: t.string, default: '', doc: 'Connection name shown by the server (`connz`); defaults to the component id.' },
  token: { kind: t.string, default: '', doc: 'Authentication token. Mutually exclusive with user/password and creds_file.' },
  user: { kind: t.string, default: '', doc: 'User name for user/password authentication.' },
  password: { kind: t.string, default: '', doc: 'Password for user/password authentication.' },
  creds_file: { kind: t.string, default: '', doc: 'Credentials file (JWT and NKey seed) for decentralized authentication.' },
} satisfies Record<string, FieldSpec>;

/** The `tls` block as a programmatic option (see `natsTlsBlockSpec` for each attribute). */
export interface NatsTlsOptions {
  readonly ca_file?: string;
  readonly cert_file?: string;
  readonly key_file?: string;
  readonly server_name?: string;
  readonly insecure_skip_verify?: boolean;
  readonly handshake_first?: boolean;
}

/**
 * The connection attributes of a NATS component as programmatic options, named and defaulted as
 * in the config (see `natsConnectionFields`).
 */
export interface NatsConnectionOptions {
  /** NATS server URL, e.g. `nats://nats:4222`; several separated by commas. */
  readonly url: string;
  /** Connection name shown by the server; defaults to the component id. */
  readonly name?: string;
  readonly token?: string;
  readonly user?: string;
  readonly password?: string;
  /** Credentials file (JWT and NKey seed) for decentralized authentication. */
  readonly creds_file?: string;
  readonly tls?: NatsTlsOptions;
}

/** A validated connection: what the client gets, and what may be shown. */
export interface NatsConnectionSettings {
  readonly servers: readonly string[];
  /** The servers without user information, for logs and health messages. */
  readonly display: string;
  readonly name: string;
  readonly options: ConnectionOptions;
  /** Compared to decide whether an update needs a new connection; holds no secret in clear. */
  readonly fingerprint: string;
}

/** The servers of `url`, each without user information: `nats://host:4222`. */
export function displayServers(url: string): string {
  return url
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => s.replace(/^([a-z]+:\/\/)?[^@/]*@/i, '$1'))
    .join(',');
}

/**
 * The decoded attributes of a NATS component with these fields (the connection's among them) and
 * its `tls` block, absent when not written.
 */
export type NatsComponentValues<F> = FieldsValues<F> & { readonly tls?: BlockValues<typeof natsTlsBlockSpec> };

/** The decoded connection attributes and `tls` block of a NATS component. */
export type NatsConnectionValues = NatsComponentValues<typeof natsConnectionFields>;

/**
 * Validates the connection attributes and the `tls` block: what a component's own validation
 * calls with its `checks`, which place the errors (in its block, or for options given in code
 * none). Files named by the settings are read now, so a missing file is a config error. The
 * connection is named `name`, else `componentId`.
 */
export function natsConnectionSettings(values: NatsConnectionValues, componentId: string, checks: Checks): NatsConnectionSettings {
  const { fail } = checks;
  const read = (file: string, attribute: string, inner?: Block): string | undefined => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      fail(`reading ${attribute}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (${file})`, attribute, inner);
      return undefined;
    }
  };
  const { url, token, user, password, creds_file: credsFile, tls } = values;
  const servers = url
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (servers.length === 0) fail('url must name at least one server', 'url');
  for (const server of servers) {
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(server)?.[1]?.toLowerCase();
    if (scheme !== undefined && scheme !== 'nats' && scheme !== 'tls')
      fail(`url must use nats:// or tls://, got ${JSON.stringify(displayServers(server))}`, 'url');
  }
  const methods = [token !== '', user !== '' || password !== '', credsFile !== ''].filter(Boolean).length;
  if (methods > 1) fail('at most one of token, user/password and creds_file may be set', token !== '' ? 'token' : 'creds_file');
  if (password !== '' && user === '') fail('password needs user', 'password');
  const name = values.name || componentId;
  const options: ConnectionOptions = {
    servers,
    name,
    // The first connection is retried by NatsLink; once up, the client reconnects on its own
    // for as long as the component runs.
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1000,
    timeout: 5000,
    pingInterval: 10_000,
    maxPingOut: 3,
  };
  if (token !== '') options.token = token;
  if (user !== '') {
    options.user = user;
    options.pass = password;
  }
  if (credsFile !== '') {
    const creds = read(credsFile, 'creds_file');
    if (creds !== undefined) options.authenticator = credsAuthenticator(new TextEncoder().encode(creds));
  }
  if (tls) {
    const tlsBlock = nestedBlocks(checks.block, 'tls')[0];
    const tlsOptions: Record<string, unknown> = {};
    for (const [attribute, key] of [
      ['ca_file', 'ca'],
      ['cert_file', 'cert'],
      ['key_file', 'key'],
    ] as const) {
      const file = tls[attribute];
      if (file === '') continue;
      const text = read(file, attribute, tlsBlock);
      if (text !== undefined) tlsOptions[key] = text;
    }
    if ((tls.cert_file === '') !== (tls.key_file === '')) fail('cert_file and key_file go together', 'cert_file', tlsBlock);
    if (tls.server_name !== '') tlsOptions.servername = tls.server_name;
    if (tls.insecure_skip_verify) tlsOptions.rejectUnauthorized = false;
    if (tls.handshake_first) tlsOptions.handshakeFirst = true;
    options.tls = tlsOptions;
  }
  const fingerprint = JSON.stringify({
    url: displayServers(url),
    name,
    auth: token !== '' ? 'token' : user !== '' ? `user:${user}` : credsFile !== '' ? `creds:${credsFile}` : 'none',
    secret: secretDigest(token + '\u0000' + password),
    tls: tls ?? null,
  });
  return { servers, display: displayServers(url), name, options, fingerprint };
}

/** A non-reversible digest, so a changed secret still counts as a change. */
function secretDigest(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

export type LinkState = 'connecting' | 'connected' | 'disconnected' | 'closed';

export interface NatsLinkOptions {
  readonly settings: NatsConnectionSettings;
  readonly log: (level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
  /** Called when the connection first comes up and after every reconnect. */
  readonly onConnected?: (nc: NatsConnection) => void;
  /** Delay before retrying a failed first connection. */
  readonly retryMs?: number;
}

/**
 * One component's connection: connects in the background (retrying until it works or the link
 * closes), follows the client's status to say whether it is up, and closes it after draining.
 */
export class NatsLink {
  private state: LinkState = 'connecting';
  private lastError = '';
  private current: NatsConnection | undefined;
  private closing = false;
  private readonly waiters = new Set<() => void>();
  private readonly started: Promise<void>;
  private retryTimer: NodeJS.Timeout | undefined;
  private wakeRetry: (() => void) | undefined;

  constructor(private readonly options: NatsLinkOptions) {
    this.started = this.connectLoop();
  }

  /** The connection while it is up. */
  connection(): NatsConnection | undefined {
    return this.state === 'connected' ? this.current : undefined;
  }

  /** Whether the connection is up, and if not why, without secrets. */
  describe(): { up: boolean; message: string } {
    const servers = this.options.settings.display;
    switch (this.state) {
      case 'connected':
        return { up: true, message: `connected to ${servers}` };
      case 'connecting':
        return { up: false, message: `connecting to NATS at ${servers}${this.lastError ? `: ${this.lastError}; retrying` : ''}` };
      case 'disconnected':
        return { up: false, message: `NATS at ${servers} is unreachable${this.lastError ? `: ${this.lastError}` : ''}; reconnecting` };
      case 'closed':
        return { up: false, message: `connection to NATS at ${servers} is closed` };
    }
  }

  /**
   * Resolves once the connection is up, or with undefined once the link closes or `signal` aborts
   * (a component stopping before it ever connected must not wait for a server that is not there).
   */
  async ready(signal?: AbortSignal): Promise<NatsConnection | undefined> {
    while (!this.closing && !signal?.aborted) {
      const nc = this.connection();
      if (nc) return nc;
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          signal?.removeEventListener('abort', wake);
          this.waiters.delete(wake);
          resolve();
        };
        this.waiters.add(wake);
        signal?.addEventListener('abort', wake);
      });
    }
    return undefined;
  }

  /** Drains the connection (pending publishes and acknowledgements go out) and closes it. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.wakeRetry?.();
    this.notify();
    await this.started;
    const nc = this.current;
    this.state = 'closed';
    if (nc && !nc.isClosed()) {
      try {
        await nc.drain();
      } catch {
        await nc.close().catch(() => {});
      }
    }
  }

  private notify(): void {
    for (const wake of [...this.waiters]) wake();
    this.waiters.clear();
  }

  private async connectLoop(): Promise<void> {
    const { settings, log } = this.options;
    let warned = false;
    while (!this.closing) {
      try {
        const nc = await connect(settings.options);
        if (this.closing) {
          await nc.close();
          return;
        }
        this.current = nc;
        this.state = 'connected';
        this.lastError = '';
        log('info', 'connected to NATS', { servers: settings.display, name: settings.name });
        void this.followStatus(nc);
        this.options.onConnected?.(nc);
        this.notify();
        return;
      } catch (err) {
        this.lastError = errorText(err);
        if (!warned) log('warn', 'cannot connect to NATS, retrying', { servers: settings.display, error: this.lastError });
        warned = true;
        await new Promise<void>((resolve) => {
          this.wakeRetry = resolve;
          this.retryTimer = setTimeout(resolve, this.options.retryMs ?? 1000);
        });
      }
    }
  }

  private async followStatus(nc: NatsConnection): Promise<void> {
    const { settings, log } = this.options;
    void nc.closed().then((err) => {
      this.state = 'closed';
      if (err && !this.closing) {
        this.lastError = errorText(err);
        log('error', 'NATS connection closed', { servers: settings.display, error: this.lastError });
      }
      this.notify();
    });
    for await (const status of nc.status() as AsyncIterable<Status>) {
      switch (status.type) {
        case 'disconnect':
          if (this.closing) break;
          this.state = 'disconnected';
          log('warn', 'disconnected from NATS', { servers: settings.display });
          break;
        case 'reconnect':
          this.state = 'connected';
          this.lastError = '';
          log('info', 'reconnected to NATS', { servers: settings.display });
          this.options.onConnected?.(nc);
          this.notify();
          break;
        case 'error':
          this.lastError = errorText(status.error);
          break;
        default:
          break;
      }
    }
  }
}

/** An error's message, with any URL's user information removed. */
export function errorText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/([a-z]+:\/\/)[^@\s/]*@/gi, '$1');
}

/** Servers before 2.10 take only a bare `+TERM`: one with a reason is not a termination to them. */
export function takesTermReasons(version: string | undefined): boolean {
  const [major = 0, minor = 0] = (version ?? '').split('.').map(Number);
  return major > 2 || (major === 2 && minor >= 10);
}
