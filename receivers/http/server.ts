/**
 * The HTTP server behind a receiver's `http` block: HTTP/1.1, optional cleartext HTTP/2 (h2c by
 * prior knowledge) on the same port, optional TLS (HTTP/2 negotiated by ALPN), and the
 * reference's connection limit.
 *
 * The limit is an accept gate, not a refusal: sockets beyond `conn_limit` are held paused and
 * unread, exactly like connections waiting in a listen backlog, and are handed to the HTTP server
 * in arrival order as admitted connections close. Node's `maxConnections` would instead close
 * them. Only admitted connections count, so the connection gauge never exceeds the limit.
 *
 * Timeouts follow the reference's meaning: the read timeout bounds reading a request (a body that
 * trickles in too slowly fails the read, and the handler answers as it does for any read error);
 * the write timeout bounds the time from the request's arrival to the end of its response, after
 * which the connection is dropped; the idle timeout bounds keep-alive idleness.
 */
import {
  Server as Http1ServerClass,
  createServer as createHttp1Server,
  type IncomingMessage,
  type Server as Http1Server,
  type ServerResponse,
} from 'node:http';
import {
  createSecureServer,
  createServer as createHttp2Server,
  type Http2SecureServer,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
  type Settings,
} from 'node:http2';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { HttpServerConfig } from './schema.js';
import { clientCertPolicy, loadTlsMaterial, tlsFilesStamp } from './tls.js';

export type HttpRequest = IncomingMessage | Http2ServerRequest;
export type HttpResponse = ServerResponse | Http2ServerResponse;
/** A request listener that serves HTTP/1.1 and HTTP/2 compatibility requests alike (Koa's `callback()`). */
export type HttpHandler = (req: HttpRequest, res: HttpResponse) => void;

export interface HttpServerHooks {
  /** Called with the number of admitted connections whenever it changes. */
  readonly onConnections?: (count: number) => void;
  /** Called when accepting a connection fails (out of file descriptors); the server goes on. */
  readonly onAcceptError?: (err: Error) => void;
}

export interface RunningHttpServer {
  /** The bound port (the real one when 0 was asked for). */
  readonly port: number;
  /** `http://127.0.0.1:4040` or `https://…`, with the address the listener is bound to. */
  readonly url: string;
  /** Admitted (accepted) connections. */
  connections(): number;
  /** Connections waiting to be admitted. */
  waiting(): number;
  /** Stops listening, drops waiting connections and closes the rest once their requests end. */
  close(graceMs?: number): Promise<void>;
}

/** The 24 bytes every HTTP/2 prior-knowledge connection starts with. */
const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/** Largest request header section accepted; the reference's runtime allows 1 MiB plus slack. */
const MAX_HEADER_BYTES = (1 << 20) + 4096;

/** Starts the server; rejects when the address cannot be bound (port in use, bad address). */
export async function startHttpServer(
  config: HttpServerConfig,
  handler: HttpHandler,
  hooks: HttpServerHooks = {},
): Promise<RunningHttpServer> {
  let admitted = 0;
  const queue: Socket[] = [];
  const live = new Set<Socket>();
  const sessions = new Set<ServerHttp2Session>();
  let closing = false;
  const limit = config.connLimit;

  /** Admitted sockets speaking HTTP/2: their sessions are closed gracefully instead. */
  const h2Sockets = new WeakSet<Socket>();
  /** The TLS socket wrapping each admitted one, where the HTTP/1 layer keeps its state. */
  const tlsSockets = new WeakMap<Socket, TLSSocket>();
  const timeouts = withRequestTimeouts(handler, config);
  const http1 = config.tls ? undefined : createHttp1(config, timeouts.handler);
  const h2c = !config.tls && config.http2.enabled ? createH2c(config, timeouts.handler) : undefined;
  const secure = config.tls ? createTls(config, timeouts.handler, (tls) => tls._parent && tlsSockets.set(tls._parent, tls)) : undefined;
  for (const server of [h2c, secure?.server]) {
    server?.on('session', (session: ServerHttp2Session) => {
      sessions.add(session);
      const socket = (session.socket as Socket & { _parent?: Socket })._parent;
      if (socket) h2Sockets.add(socket);
      session.once('close', () => sessions.delete(session));
    });
  }

  const gate: NetServer = createNetServer({ pauseOnConnect: true, noDelay: true });
  gate.on('connection', (socket: Socket) => {
    if (closing) {
      socket.destroy();
      return;
    }
    if (limit > 0 && admitted >= limit) queue.push(socket);
    else admit(socket);
  });

  function admit(socket: Socket): void {
    admitted++;
    live.add(socket);
    hooks.onConnections?.(admitted);
    socket.once('close', () => {
      admitted--;
      live.delete(socket);
      hooks.onConnections?.(admitted);
      const next = queue.shift();
      if (next && !closing) admit(next);
    });
    // Errors on admitted sockets (resets) are the HTTP layer's business; never crash on them.
    socket.on('error', () => {});
    if (secure) secure.hand(socket);
    else if (h2c) sniffPreface(socket, http1!, h2c, () => h2Sockets.add(socket));
    else handTo(http1!, socket);
  }

  await new Promise<void>((resolve, reject) => {
    gate.once('error', reject);
    gate.listen({ port: config.listenPort, host: config.listenAddress || undefined }, () => {
      gate.off('error', reject);
      resolve();
    });
  });
  gate.on('error', (err: Error) => hooks.onAcceptError?.(err));
  const address = gate.address() as AddressInfo;
  const host = config.listenAddress === '' ? '127.0.0.1' : address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    port: address.port,
    url: `${config.tls ? 'https' : 'http'}://${host}:${address.port}`,
    connections: () => admitted,
    waiting: () => queue.length,
    async close(graceMs = 30_000) {
      closing = true;
      const stopped = new Promise<void>((resolve) => gate.close(() => resolve()));
      for (const socket of queue.splice(0)) socket.destroy();
      timeouts.stop();
      for (const server of [http1, h2c, secure?.server]) server?.close();
      for (const session of sessions) session.close();
      // Idle connections go now; busy ones once their requests end, within the grace period.
      for (const socket of live) {
        if (h2Sockets.has(socket)) continue;
        const busy = responseInFlight(tlsSockets.get(socket) ?? socket);
        if (busy) busy.once('close', () => socket.destroySoon());
        else socket.destroySoon();
      }
      const deadline = Date.now() + graceMs;
      while (live.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      for (const socket of live) socket.destroy();
      await stopped;
    },
  };
}

/** The response an HTTP/1 connection is still writing, if any (the runtime keeps it on the socket). */
function responseInFlight(socket: Socket): ServerResponse | undefined {
  const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  return res && !res.writableFinished ? res : undefined;
}

function handTo(server: Http1Server | Http2Server | Http2SecureServer, socket: Socket): void {
  // A paused HTTP/1 socket starts reading before the server takes it (resuming afterwards costs
  // throughput); HTTP/2 sessions read through their own handle.
  if (server instanceof Http1ServerClass) socket.resume();
  server.emit('connection', socket);
}

/** Routes a cleartext connection to the HTTP/2 server when it opens with the preface. */
function sniffPreface(socket: Socket, http1: Http1Server, h2c: Http2Server, onH2: () => void): void {
  let seen = Buffer.alloc(0);
  const decide = (target: Http1Server | Http2Server) => {
    socket.off('data', onData);
    socket.off('end', onEnd);
    socket.pause();
    socket.unshift(seen);
    handTo(target, socket);
  };
  const onData = (chunk: Buffer) => {
    seen = Buffer.concat([seen, chunk]);
    const n = Math.min(seen.length, H2_PREFACE.length);
    if (!seen.subarray(0, n).equals(H2_PREFACE.subarray(0, n))) decide(http1);
    else if (seen.length >= H2_PREFACE.length) {
      onH2();
      decide(h2c);
    }
  };
  const onEnd = () => socket.destroy();
  socket.on('data', onData);
  socket.once('end', onEnd);
  socket.resume();
}

function createHttp1(config: HttpServerConfig, handler: HttpHandler): Http1Server {
  const server = createHttp1Server(
    {
      // Reading the body is bounded per request (see withRequestTimeouts); Node's own whole-request
      // timeout would answer 408, which the reference never sends.
      requestTimeout: 0,
      headersTimeout: config.readTimeoutMs,
      keepAliveTimeout: config.idleTimeoutMs || config.readTimeoutMs,
      connectionsCheckingInterval: checkingInterval(config.readTimeoutMs),
      maxHeaderSize: MAX_HEADER_BYTES,
    },
    handler as (req: IncomingMessage, res: ServerResponse) => void,
  );
  server.on('clientError', answerClientError);
  // The runtime starts tracking connections (header timeouts, idle closing) when a server
  // starts listening; this one never listens itself, the gate hands it its sockets.
  server.emit('listening');
  return server;
}

function createH2c(config: HttpServerConfig, handler: HttpHandler): Http2Server {
  const server = createHttp2Server(
    { settings: h2Settings(config), maxSessionMemory: 64 },
    handler as (req: Http2ServerRequest, res: Http2ServerResponse) => void,
  );
  server.setTimeout(config.http2.idleTimeoutMs || config.idleTimeoutMs);
  return server;
}

interface SecureServer {
  readonly server: Http2SecureServer;
  hand(socket: Socket): void;
}

/**
 * HTTPS with HTTP/2 by ALPN and HTTP/1.1 beside it. Certificate files are re-read when they
 * change, checked as each connection is admitted (the reference re-reads them per handshake).
 */
function createTls(
  config: HttpServerConfig,
  handler: HttpHandler,
  onSecure: (socket: TLSSocket & { _parent?: Socket }) => void,
): SecureServer {
  const tls = config.tls!;
  const policy = clientCertPolicy(tls.clientAuth);
  const server = createSecureServer(
    {
      ...loadTlsMaterial(tls),
      ...policy,
      allowHTTP1: true,
      settings: h2Settings(config),
      maxSessionMemory: 64,
    },
    handler as (req: Http2ServerRequest, res: Http2ServerResponse) => void,
  );
  server.setTimeout(config.idleTimeoutMs);
  server.on('secureConnection', (socket: TLSSocket) => {
    // A TLS socket wraps the admitted one; the runtime keeps that one as `_parent`.
    onSecure(socket);
    const cert = socket.getPeerCertificate();
    const presented = cert !== null && Object.keys(cert).length > 0;
    if (tls.clientAuth === 'RequireAnyClientCert' && !presented) socket.destroy();
    if (tls.clientAuth === 'VerifyClientCertIfGiven' && presented && !socket.authorized) socket.destroy();
  });
  server.on('tlsClientError', () => {});
  let stamp = tlsFilesStamp(tls);
  return {
    server,
    hand(socket) {
      const now = tlsFilesStamp(tls);
      if (now !== stamp) {
        try {
          server.setSecureContext(loadTlsMaterial(tls));
          stamp = now;
        } catch {
          // A half-written certificate file: keep serving with the previous material.
        }
      }
      handTo(server, socket);
    },
  };
}

function h2Settings(config: HttpServerConfig): Settings {
  const settings: Settings = {
    maxConcurrentStreams: config.http2.maxConcurrentStreams,
    headerTableSize: config.http2.maxDecoderHeaderTableSize,
  };
  if (config.http2.maxReadFrameSize > 0) settings.maxFrameSize = config.http2.maxReadFrameSize;
  return settings;
}

function checkingInterval(readTimeoutMs: number): number {
  if (readTimeoutMs <= 0) return 30_000;
  return Math.max(50, Math.min(1_000, Math.floor(readTimeoutMs / 4)));
}

/**
 * Malformed requests get the reference's plain-text 400 (or 431 for oversized headers); a request
 * whose headers arrive too slowly is dropped without an answer, as the reference drops it.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable || err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const [status, text] = err.code === 'HPE_HEADER_OVERFLOW' ? ['431', 'Request Header Fields Too Large'] : ['400', 'Bad Request'];
  socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${status} ${text}`);
}

/** A request under the read and write timeouts. */
interface InFlight {
  readonly req: HttpRequest;
  readonly res: HttpResponse;
  readonly startedAt: number;
  readTimedOut: boolean;
  /** Called once when the read timeout passes with the body still arriving. */
  onReadTimeout?: Array<() => void>;
}

/**
 * Where a request's InFlight record lives: on its connection (HTTP/1) or stream (HTTP/2), which
 * holds only its newest request. An HTTP/1 connection reads one request at a time, so the newest
 * is the only one whose body can still be arriving, and pipelined responses go out in order, so
 * the newest one's write deadline is the last to pass. Keeping records on long-lived connections
 * rather than in a list or a map keyed by request matters at tens of thousands of requests per
 * second: a list keeps every finished request alive until the next sweep (the garbage collector
 * then copies and promotes them all), and a WeakMap makes every collection walk its entries.
 */
const IN_FLIGHT = Symbol('rivulet.inFlight');
type Holder = { [IN_FLIGHT]?: InFlight | undefined };

function holderOf(req: HttpRequest): Holder {
  return ('stream' in req ? req.stream : req.socket) as unknown as Holder;
}

function inFlightOf(req: HttpRequest): InFlight | undefined {
  const entry = holderOf(req)?.[IN_FLIGHT];
  return entry?.req === req ? entry : undefined;
}

/** The response has gone out, or can no longer go out because its connection or stream is gone. */
function ended(entry: InFlight): boolean {
  const res = entry.res;
  if (res.writableFinished) return true;
  return 'stream' in res ? res.stream.destroyed : res.destroyed;
}

/**
 * The signal that fires when the read timeout passes before `req`'s body has arrived. Body
 * readers watch it so a slow upload fails like any read error (and the handler can still answer).
 */
export function readDeadline(req: HttpRequest): AbortSignal | undefined {
  if (!inFlightOf(req)) return undefined;
  const controller = new AbortController();
  onReadTimeout(req, () => controller.abort(readTimeoutError()));
  return controller.signal;
}

const NOTHING_TO_STOP = (): void => {};

/**
 * Calls `listener` once if the read timeout passes before `req`'s body has arrived (at once if it
 * already has). Returns the function that removes it. The cheap form of `readDeadline`, for
 * readers on the hot path.
 */
export function onReadTimeout(req: HttpRequest, listener: () => void): () => void {
  const entry = inFlightOf(req);
  if (!entry) return NOTHING_TO_STOP;
  if (entry.readTimedOut) {
    listener();
    return NOTHING_TO_STOP;
  }
  (entry.onReadTimeout ??= []).push(listener);
  return () => {
    const i = entry.onReadTimeout?.indexOf(listener) ?? -1;
    if (i >= 0) entry.onReadTimeout!.splice(i, 1);
  };
}

export function readTimeoutError(): Error {
  return Object.assign(new Error('i/o timeout'), { code: 'ETIMEDOUT' });
}

/**
 * The read and write timeouts. Rather than arming timers or listeners per request, one sweep per
 * server checks the connections and streams with a request in flight a few times per timeout
 * period (a timeout fires between its nominal time and a quarter period later).
 */
function withRequestTimeouts(handler: HttpHandler, config: HttpServerConfig): { handler: HttpHandler; stop(): void } {
  const read = config.readTimeoutMs;
  const write = config.writeTimeoutMs;
  if (read <= 0 && write <= 0) return { handler, stop() {} };
  const holders = new Set<Holder>();
  const period = Math.max(10, Math.min(250, Math.floor(Math.min(...[read, write].filter((t) => t > 0)) / 4)));
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const holder of holders) {
      const entry = holder[IN_FLIGHT];
      if (!entry || ended(entry)) {
        holder[IN_FLIGHT] = undefined;
        holders.delete(holder);
        continue;
      }
      const age = now - entry.startedAt;
      if (read > 0 && age >= read && !entry.req.complete && !entry.readTimedOut) {
        entry.readTimedOut = true;
        const listeners = entry.onReadTimeout ?? [];
        entry.onReadTimeout = undefined;
        for (const listener of listeners) listener();
      }
      if (write > 0 && age >= write) {
        holder[IN_FLIGHT] = undefined;
        holders.delete(holder);
        if ('stream' in entry.req) entry.req.stream.close();
        else entry.req.socket.destroy();
      }
    }
  }, period);
  sweep.unref();
  const timed: HttpHandler = (req, res) => {
    const holder = holderOf(req);
    holder[IN_FLIGHT] = { req, res, startedAt: Date.now(), readTimedOut: false, onReadTimeout: undefined };
    holders.add(holder);
    handler(req, res);
  };
  return { handler: timed, stop: () => clearInterval(sweep) };
}
