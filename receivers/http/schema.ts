/**
 * The `http` block shared by every receiver that runs its own HTTP server (profiles.receive_http,
 * the logs push API): its field schema with the reference's defaults, and the pure validation
 * that turns decoded values into an `HttpServerConfig` or precise, positioned config errors.
 *
 * Reference quirks kept: omitted attributes inside a written `http {}` keep the component's
 * defaults (so `http { listen_port = 9999 }` still has the component's conn_limit); `listen_port`
 * may be written as a string; `conn_limit <= 0` means no limit.
 */
import type { Block, Statement } from '../../lib/config/ast.js';
import { ConfigError, ConfigErrors, type Position } from '../../lib/config/errors.js';
import { t, type NestedBlockSpec } from '../../lib/config/schema.js';
import { resolveTls, tlsBlockSpec, type TlsServerConfig } from './tls.js';

/** Cleartext HTTP/2 (h2c) settings, from the undocumented `http2` block. */
export interface Http2Config {
  readonly enabled: boolean;
  readonly maxConcurrentStreams: number;
  readonly maxReadFrameSize: number;
  readonly maxDecoderHeaderTableSize: number;
  readonly idleTimeoutMs: number;
}

/** A validated `http` block. Durations are milliseconds; 0 means no timeout. */
export interface HttpServerConfig {
  readonly listenAddress: string;
  readonly listenPort: number;
  /** 0 = no limit. */
  readonly connLimit: number;
  readonly readTimeoutMs: number;
  readonly writeTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly http2: Http2Config;
  /** Absent when the block configures no certificate: the server then speaks plain HTTP. */
  readonly tls?: TlsServerConfig;
}

/** What differs between components that embed the block. */
export interface HttpBlockDefaults {
  readonly listenPort: number;
  readonly connLimit: number;
}

const http2BlockSpec: NestedBlockSpec = {
  doc: 'Serves cleartext HTTP/2 (h2c, prior knowledge) on the same port as HTTP/1.1.',
  fields: {
    enabled: { kind: t.bool, default: false, doc: 'Accept h2c connections.' },
    max_concurrent_streams: { kind: t.int, default: 100, doc: 'Streams a client may open at once on one connection.' },
    max_read_frame_size: { kind: t.int, default: 0, doc: 'Largest frame the server reads; 0 keeps the protocol default (16 KiB).' },
    max_decoder_header_table_size: { kind: t.int, default: 4096, doc: 'Header compression table size the server decodes with.' },
    max_encoder_header_table_size: {
      kind: t.int,
      default: 4096,
      doc: 'Accepted for compatibility; the runtime picks its own encoder table size.',
    },
    idle_timeout: {
      kind: t.duration,
      default: 0n,
      doc: 'Closes an HTTP/2 connection idle this long; 0 falls back to server_idle_timeout.',
    },
    ping_timeout: { kind: t.duration, default: 15_000_000_000n, doc: 'Accepted for compatibility.' },
    read_idle_timeout: { kind: t.duration, default: 0n, doc: 'Accepted for compatibility.' },
    write_byte_timeout: { kind: t.duration, default: 0n, doc: 'Accepted for compatibility.' },
    max_handlers: { kind: t.int, default: 0, doc: 'Accepted for compatibility.' },
    max_upload_buffer_per_connection: { kind: t.int, default: 0, doc: 'Accepted for compatibility.' },
    max_upload_buffer_per_stream: { kind: t.int, default: 0, doc: 'Accepted for compatibility.' },
    permit_prohibited_ciphers: { kind: t.bool, default: false, doc: 'Accepted for compatibility.' },
  },
};

/** The `http` block's schema for a component with these defaults. */
export function httpBlockSpec(defaults: HttpBlockDefaults): NestedBlockSpec {
  return {
    doc: 'Configures the HTTP server.',
    fields: {
      listen_address: { kind: t.string, default: '', doc: 'Address to listen on; empty means every interface.' },
      listen_port: { kind: t.any, default: defaults.listenPort, doc: 'Port to listen on (number or string); 0 picks a free port.' },
      conn_limit: {
        kind: t.int,
        default: defaults.connLimit,
        doc: 'Most TCP connections accepted at once; more wait unaccepted. 0 means no limit.',
      },
      server_read_timeout: { kind: t.duration, default: 30_000_000_000n, doc: 'Time to read a whole request, body included.' },
      server_write_timeout: {
        kind: t.duration,
        default: 30_000_000_000n,
        doc: 'Time from the end of the request headers to the end of the response.',
      },
      server_idle_timeout: { kind: t.duration, default: 120_000_000_000n, doc: 'How long an idle keep-alive connection stays open.' },
    },
    blocks: { http2: http2BlockSpec, tls: tlsBlockSpec },
  };
}

const NS_PER_MS = 1_000_000n;

function durationMs(ns: unknown): number {
  return Number((ns as bigint) / NS_PER_MS);
}

/** The decoded values of an `http` block as the schema leaves them (absent block: undefined). */
export type HttpBlockValues = Record<string, unknown> | undefined;

/**
 * Validates an `http` block. `block` (the component block) lets errors point at the attribute
 * that caused them; without it they carry no position.
 */
export function resolveHttpConfig(
  values: HttpBlockValues,
  defaults: HttpBlockDefaults,
  block?: Block,
  path: readonly string[] = [],
): HttpServerConfig {
  const errors: ConfigError[] = [];
  const httpBlock = block ? nestedBlock(block, 'http') : undefined;
  const fail = (reason: string, attribute: string, inner?: Block) => {
    const where = inner ?? httpBlock;
    const pos = where ? (attributePos(where, attribute) ?? where.pos) : block?.pos;
    const blockPath = [...path, ...(httpBlock ? ['http'] : []), ...(inner ? [inner.name] : [])];
    errors.push(new ConfigError(reason, pos, blockPath));
  };

  const v = values ?? {};
  const listenAddress = (v.listen_address as string | undefined) ?? '';
  const listenPort = parsePort(v.listen_port ?? defaults.listenPort, (reason) => fail(reason, 'listen_port'));
  const connLimit = Math.max(0, (v.conn_limit as number | undefined) ?? defaults.connLimit);
  const timeouts = {
    readTimeoutMs: v.server_read_timeout === undefined ? 30_000 : durationMs(v.server_read_timeout),
    writeTimeoutMs: v.server_write_timeout === undefined ? 30_000 : durationMs(v.server_write_timeout),
    idleTimeoutMs: v.server_idle_timeout === undefined ? 120_000 : durationMs(v.server_idle_timeout),
  };
  for (const [name, ms] of [
    ['server_read_timeout', timeouts.readTimeoutMs],
    ['server_write_timeout', timeouts.writeTimeoutMs],
    ['server_idle_timeout', timeouts.idleTimeoutMs],
  ] as const) {
    if (ms < 0) fail(`${name} must not be negative`, name);
  }

  const h2 = (v.http2 as Record<string, unknown> | undefined) ?? {};
  const http2: Http2Config = {
    enabled: (h2.enabled as boolean | undefined) ?? false,
    maxConcurrentStreams: (h2.max_concurrent_streams as number | undefined) ?? 100,
    maxReadFrameSize: (h2.max_read_frame_size as number | undefined) ?? 0,
    maxDecoderHeaderTableSize: (h2.max_decoder_header_table_size as number | undefined) ?? 4096,
    idleTimeoutMs: h2.idle_timeout === undefined ? 0 : durationMs(h2.idle_timeout),
  };
  const http2Block = httpBlock ? nestedBlock(httpBlock, 'http2') : undefined;
  if (http2.maxReadFrameSize !== 0 && (http2.maxReadFrameSize < 16_384 || http2.maxReadFrameSize > 16_777_215)) {
    fail('max_read_frame_size must be 0 or between 16384 and 16777215', 'max_read_frame_size', http2Block);
  }
  if (http2.maxConcurrentStreams < 0) fail('max_concurrent_streams must not be negative', 'max_concurrent_streams', http2Block);

  let tls: TlsServerConfig | undefined;
  const tlsValues = v.tls as Record<string, unknown> | undefined;
  if (tlsValues) {
    const tlsBlock = httpBlock ? nestedBlock(httpBlock, 'tls') : undefined;
    tls = resolveTls(tlsValues, (reason, attribute) => fail(reason, attribute, tlsBlock));
  }

  if (errors.length > 0) throw new ConfigErrors(errors);
  return { listenAddress, listenPort, connLimit, ...timeouts, http2, ...(tls ? { tls } : {}) };
}

function parsePort(value: unknown, fail: (reason: string) => void): number {
  let port: number | undefined;
  if (typeof value === 'number') port = value;
  else if (typeof value === 'string' && /^[0-9]+$/.test(value.trim())) port = Number(value.trim());
  if (port === undefined || !Number.isInteger(port)) {
    fail(`listen_port must be a port number, got ${JSON.stringify(value)}`);
    return 0;
  }
  if (port < 0 || port > 65_535) {
    fail(`listen_port ${port} is out of range 0-65535`);
    return 0;
  }
  return port;
}

function nestedBlock(block: Block, name: string): Block | undefined {
  return block.body.find((s): s is Block => s.kind === 'block' && s.name === name);
}

function attributePos(block: Block, name: string): Position | undefined {
  return block.body.find((s: Statement) => s.kind === 'attribute' && s.name === name)?.pos;
}

/** Whether two configs would run the same server (the listener restarts only when they differ). */
export function sameHttpConfig(a: HttpServerConfig, b: HttpServerConfig): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
