/**
 * The HTTP server behind a receiver's `http` block: HTTP/1.1, optional cleartext HTTP/2 (h2c by
 * prior knowledge) on the same port, optional TLS (HTTP/2 negotiated by ALPN), and the
 * reference's connection limit.
 *
 * The server that speaks the outermost protocol listens itself: the HTTP/1.1 server for plain
 * HTTP (so the runtime tracks its connections for the header and keep-alive timeouts), the TLS
 * server for HTTPS. Connections reach the protocol servers through their documented 'connection'
 * event: an HTTP/2 server gets the sockets that open with the h2c preface or negotiate `h2`, an
 * HTTP/1.1 server the rest.
 *
 * The limit is an accept gate, not a refusal, like Go's `netutil.LimitListener`, which the
 * reference uses: a semaphore whose slot is taken when a connection is admitted and given back
 * (once) when it closes, however it closes. The listening server's own connection handling is
 * taken over, and sockets beyond `conn_limit` are held unanswered and unread, like connections
 * waiting in a listen backlog, and handed on in arrival order as admitted connections close.
 * Node's `maxConnections` would instead close them. Only admitted connections count, so the
 * connection gauge never exceeds the limit. At most
 * `MAX_WAITING_CONNECTIONS` wait; a connection beyond that is closed at once, as a full listen
 * backlog drops it.
 *
 * Timeouts follow the reference's meaning: the read timeout bounds reading a request (a body that
 * trickles in too slowly fails the read, and the handler answers as it does for any read error);
 * the write timeout bounds the time from the request's arrival to the end of its response, after
 * which the connection is dropped; the idle timeout bounds keep-alive idleness.
 */
import { createServer as createHttp1Server, type IncomingMessage, type Server as Http1Server, type ServerResponse } from 'node:http';
import {
  createServer as createHttp2Server,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
  type Settings,
} from 'node:http2';
import { Server as NetServerBase, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import { MAX_TIMER_MS } from '../../core/clock.js';
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
  /**
   * Stops listening, drops waiting connections, closes idle ones and the rest once their requests
   * end (at the latest after the grace period). Also hurries a server being retired along.
   */
  close(graceMs?: number): Promise<void>;
  /**
   * Gives the address up for a successor without cutting any connection short: stops listening
   * at once (`released`, after which the port can be bound again), and serves every connection
   * it has accepted, waiting ones included, until it goes, each response with `Connection:
   * close`; a connection left idle closes when its keep-alive timeout passes. `drained` resolves
   * when the last one has gone, or the grace period has ended and the rest were closed.
   */
  retire(graceMs?: number): { released: Promise<void>; drained: Promise<void> };
  /**
   * The listening socket, for a successor on the same address to take over (see `startHttpServer`),
   * after which this server is retired as by `retire` but without closing it.
   */
  readonly listeningSocket: NetServer;
}

/**
 * Most connections held waiting beyond `conn_limit`. Each holds a file descriptor and up to one
 * read buffer (16 KiB); the kernel's own listen backlog is of this order (4,096 by default).
 */
export const MAX_WAITING_CONNECTIONS = 1024;

/** The 24 bytes every HTTP/2 prior-knowledge connection starts with. */
const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/** Largest request header section accepted; the reference's runtime allows 1 MiB plus slack. */
const MAX_HEADER_BYTES = (1 << 20) + 4096;

/**
 * The response each HTTP/1 connection is writing for its newest request, kept on the socket the
 * request came on (the TLS socket for HTTPS) as the request arrives.
 */
const CURRENT_RESPONSE = Symbol('rivulet.currentResponse');
type Http1Connection = Socket & { [CURRENT_RESPONSE]?: ServerResponse };

/**
 * Starts the server; rejects when the address cannot be bound (port in use, bad address). Given a
 * `predecessor` on the same address, it takes over that server's listening socket instead of
 * binding a new one, so no connection meets a closed port (refused) or is dropped from the
 * closing socket's backlog (reset), and retires the predecessor, which answers what it accepted.
 */
export async function startHttpServer(
  config: HttpServerConfig,
  handler: HttpHandler,
  hooks: HttpServerHooks = {},
  predecessor?: { server: RunningHttpServer; graceMs: number },
): Promise<RunningHttpServer> {
  let admitted = 0;
  const queue: Socket[] = [];
  const live = new Set<Socket>();
  const sessions = new Set<ServerHttp2Session>();
  /** Set once the server stops listening: HTTP/1 responses from then on close their connection. */
  let closing = false;
  /** Set when the server is closed rather than retired: waiting and idle connections go at once. */
  let hurried = false;
  const limit = config.connLimit;

  /** Admitted sockets speaking HTTP/2: their sessions are closed gracefully instead. */
  const h2Sockets = new WeakSet<Socket>();
  /** The socket HTTP/1 is spoken on for each admitted one: itself, or the TLS socket over it. */
  const http1Over = new WeakMap<Socket, Http1Connection>();
  const timeouts = withRequestTimeouts(handler, config);
  const serve: HttpHandler = (req, res) => {
    if (!('stream' in req)) {
      (req.socket as Http1Connection)[CURRENT_RESPONSE] = res as ServerResponse;
      if (closing) res.setHeader('Connection', 'close');
    }
    timeouts.handler(req, res);
  };

  const http1 = createHttp1(config, serve);
  const h2 = config.tls || config.http2.enabled ? createH2(config, serve) : undefined;
  h2?.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  const secure = config.tls
    ? createTls(config, (tls, raw) => {
        if (raw && tls.alpnProtocol === 'h2') h2Sockets.add(raw);
        else if (raw) http1Over.set(raw, tls);
        handTo(tls.alpnProtocol === 'h2' ? h2! : http1, tls);
      })
    : undefined;

  const listening: NetServer = secure?.server ?? http1;
  // Sockets arrive paused: nothing is read from one until it is admitted, as a connection waiting
  // in the listen backlog is not read. Were a waiting socket read, a client that leaves meanwhile
  // would have its end of stream taken into a buffer no one watches, and once admitted the socket
  // would hold its slot, unseen as closed, until the read timeout.
  (listening as NetServer & { pauseOnConnect: boolean }).pauseOnConnect = true;
  /** The listening server's own connection handling, which the gate calls for admitted sockets. */
  const accept = takeOverConnections(listening, (socket: Socket) => {
    // Errors on any socket (resets) are the HTTP layer's business; never crash on them.
    socket.on('error', () => {});
    if (closing) {
      socket.destroy();
      return;
    }
    if (limit <= 0 || admitted < limit) admit(socket);
    else if (queue.length < MAX_WAITING_CONNECTIONS) hold(socket);
    else socket.destroy();
  });

  /** Keeps a socket waiting for a slot; one that goes away meanwhile gives its place up. */
  function hold(socket: Socket): void {
    queue.push(socket);
    socket.once('close', () => {
      const i = queue.indexOf(socket);
      if (i >= 0) queue.splice(i, 1);
    });
  }

  function admit(socket: Socket): void {
    admitted++;
    live.add(socket);
    hooks.onConnections?.(admitted);
    socket.once('close', () => {
      admitted--;
      live.delete(socket);
      hooks.onConnections?.(admitted);
      const next = queue.shift();
      if (next && !hurried) admit(next);
    });
    if (secure) {
      secure.admitted(socket);
      accept(socket);
    } else if (h2) {
      sniffPreface(socket, (isH2) => {
        if (isH2) {
          h2Sockets.add(socket);
          handTo(h2, socket);
        } else {
          http1Over.set(socket, socket);
          // A paused HTTP/1 socket starts reading before the server takes it (resuming afterwards
          // costs throughput).
          socket.resume();
          accept(socket);
        }
      });
    } else {
      http1Over.set(socket, socket);
      accept(socket);
      socket.resume();
    }
  }

  await new Promise<void>((resolve, reject) => {
    listening.once('error', reject);
    const listened = () => {
      listening.off('error', reject);
      resolve();
    };
    // A server handed as the handle lends its listening socket: new connections come here now.
    if (predecessor) listening.listen(predecessor.server.listeningSocket, listened);
    else listening.listen({ port: config.listenPort, host: config.listenAddress || undefined }, listened);
  });
  if (predecessor) (predecessor.server as HandOver)[HAND_OVER](predecessor.graceMs);
  listening.on('error', (err: Error) => hooks.onAcceptError?.(err));
  const address = listening.address() as AddressInfo;
  const host = config.listenAddress === '' ? '127.0.0.1' : address.family === 'IPv6' ? `[${address.address}]` : address.address;

  /** Closes idle HTTP/1 connections now and busy ones once their responses are out. */
  function closeIdleConnections(): void {
    // Connections still being sniffed or in their TLS handshake have no request yet.
    for (const socket of live) {
      if (h2Sockets.has(socket)) continue;
      const connection = http1Over.get(socket);
      const busy = connection && responseInFlight(connection);
      if (busy) busy.once('close', () => connection.destroySoon());
      else (connection ?? socket).destroySoon();
    }
  }

  let released: Promise<void> | undefined;
  let drained: Promise<void> | undefined;
  function shutdown(graceMs: number, handedOver = false): void {
    closing = true;
    // The socket a successor took over is its own now: dropping this server's reference to it
    // leaves it open when this server closes below.
    if (handedOver) (listening as NetServer & { _handle: unknown })._handle = null;
    // Only the listening socket is closed: http.Server#close would also destroy the connections
    // it deems idle, among them one whose response has been ended but not yet written out (its
    // push taken, its answer lost, so the client sends it again). The port is free at once; the
    // close callback would wait for every connection to go, so it is not used to tell.
    else NetServerBase.prototype.close.call(listening);
    released = new Promise<void>((resolve) => setImmediate(resolve));
    for (const server of [http1, h2]) if (server && server !== listening) NetServerBase.prototype.close.call(server);
    for (const session of sessions) session.close();
    // A response not yet begun closes its connection; one already begun, the next request's will.
    for (const socket of live) {
      const connection = http1Over.get(socket);
      const busy = connection && responseInFlight(connection);
      if (busy && !busy.headersSent) busy.setHeader('Connection', 'close');
    }
    drained = (async () => {
      // Real time: what this waits for is sockets closing, which happens on the network's time.
      const deadline = Date.now() + graceMs;
      while ((live.size > 0 || queue.length > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      for (const socket of queue.splice(0)) socket.destroy();
      for (const socket of live) socket.destroy();
      timeouts.stop();
      // Stops the HTTP/1 server's own timeout checks; it has no connection left.
      http1.close(() => {});
      await released;
    })();
  }

  const running: HandOver = {
    port: address.port,
    url: `${config.tls ? 'https' : 'http'}://${host}:${address.port}`,
    connections: () => admitted,
    waiting: () => queue.length,
    listeningSocket: listening,
    [HAND_OVER](graceMs: number) {
      if (!drained) shutdown(graceMs, true);
    },
    retire(graceMs = 30_000) {
      if (!drained) shutdown(graceMs);
      return { released: released!, drained: drained! };
    },
    close(graceMs = 30_000) {
      if (!drained) shutdown(graceMs);
      hurried = true;
      for (const socket of queue.splice(0)) socket.destroy();
      closeIdleConnections();
      return drained!;
    },
  };
  return running;
}

/** How a successor retires the server whose listening socket it has taken over. */
const HAND_OVER = Symbol('rivulet.handOver');
type HandOver = RunningHttpServer & { [HAND_OVER](graceMs: number): void };

/**
 * Replaces a server's 'connection' listeners (its own handling of new sockets) by `gate`, and
 * returns a function that runs them for a socket the gate lets through.
 */
function takeOverConnections(server: NetServer, gate: (socket: Socket) => void): (socket: Socket) => void {
  const own = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  server.on('connection', gate);
  return (socket) => {
    for (const listener of own) listener.call(server, socket);
  };
}

/** The response an HTTP/1 connection is still writing, if any. */
function responseInFlight(connection: Http1Connection): ServerResponse | undefined {
  const res = connection[CURRENT_RESPONSE];
  return res && !res.writableFinished ? res : undefined;
}

/** Hands a connection to a protocol server that does not listen itself. */
function handTo(server: Http1Server | Http2Server, socket: Socket): void {
  server.emit('connection', socket);
}

/** Reads a cleartext connection's first bytes and tells whether it opens with the HTTP/2 preface. */
function sniffPreface(socket: Socket, decided: (isH2: boolean) => void): void {
  let seen = Buffer.alloc(0);
  const decide = (isH2: boolean) => {
    socket.off('data', onData);
    socket.off('end', onEnd);
    socket.pause();
    socket.unshift(seen);
    decided(isH2);
  };
  const onData = (chunk: Buffer) => {
    seen = Buffer.concat([seen, chunk]);
    const n = Math.min(seen.length, H2_PREFACE.length);
    if (!seen.subarray(0, n).equals(H2_PREFACE.subarray(0, n))) decide(false);
    else if (seen.length >= H2_PREFACE.length) decide(true);
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
      headersTimeout: timerMs(config.readTimeoutMs),
      // The runtime waits a second longer than this on an idle connection.
      keepAliveTimeout: Math.min(config.idleTimeoutMs || config.readTimeoutMs, MAX_TIMER_MS - 1000),
      connectionsCheckingInterval: checkingInterval(config.readTimeoutMs),
      maxHeaderSize: MAX_HEADER_BYTES,
    },
    handler as (req: IncomingMessage, res: ServerResponse) => void,
  );
  server.on('clientError', answerClientError);
  // Behind TLS this server does not listen, so the runtime does not watch its connections: the
  // idle timeout then bounds any silence on them, as it did on the reference's TLS listener.
  if (config.tls) server.setTimeout(timerMs(config.idleTimeoutMs));
  return server;
}

function createH2(config: HttpServerConfig, handler: HttpHandler): Http2Server {
  const server = createHttp2Server(
    { settings: h2Settings(config), maxSessionMemory: 64 },
    handler as (req: Http2ServerRequest, res: Http2ServerResponse) => void,
  );
  server.setTimeout(timerMs(config.tls ? config.idleTimeoutMs : config.http2.idleTimeoutMs || config.idleTimeoutMs));
  return server;
}

interface SecureServer {
  readonly server: TlsServer;
  /** Notes an admitted socket before its handshake; re-reads changed certificate files. */
  admitted(socket: Socket): void;
}

/**
 * HTTPS with HTTP/2 by ALPN and HTTP/1.1 beside it. Certificate files are re-read when they
 * change, checked as each connection is admitted (the reference re-reads them per handshake).
 * `onSecure` gets each TLS socket whose client passed the certificate policy, with the admitted
 * socket it runs over.
 */
function createTls(config: HttpServerConfig, onSecure: (tls: TLSSocket, raw: Socket | undefined) => void): SecureServer {
  const tls = config.tls!;
  const policy = clientCertPolicy(tls.clientAuth);
  const server = createTlsServer({
    // HTTP/2 asks for TLS 1.2 at least; a configured min_version still applies.
    minVersion: 'TLSv1.2',
    ...loadTlsMaterial(tls),
    ...policy,
    ALPNProtocols: ['h2', 'http/1.1'],
  });
  /**
   * Admitted sockets by their connection's addresses. The TLS layer offers no documented way from
   * the TLS socket back to the socket it wraps, but both report the same local and peer address,
   * which tell one listener's live connections apart.
   */
  const byAddress = new Map<string, Socket>();
  server.on('secureConnection', (socket: TLSSocket) => {
    const cert = socket.getPeerCertificate();
    const presented = cert !== null && Object.keys(cert).length > 0;
    if (tls.clientAuth === 'RequireAnyClientCert' && !presented) return void socket.destroy();
    if (tls.clientAuth === 'VerifyClientCertIfGiven' && presented && !socket.authorized) return void socket.destroy();
    onSecure(socket, byAddress.get(addressKey(socket)));
  });
  server.on('tlsClientError', () => {});
  let stamp = tlsFilesStamp(tls);
  return {
    server,
    admitted(socket) {
      const key = addressKey(socket);
      byAddress.set(key, socket);
      socket.once('close', () => {
        if (byAddress.get(key) === socket) byAddress.delete(key);
      });
      const now = tlsFilesStamp(tls);
      if (now !== stamp) {
        try {
          server.setSecureContext(loadTlsMaterial(tls));
          stamp = now;
        } catch {
          // A half-written certificate file: keep serving with the previous material.
        }
      }
    },
  };
}

function addressKey(socket: Socket): string {
  return `${socket.localAddress}|${socket.localPort}|${socket.remoteAddress}|${socket.remotePort}`;
}

function h2Settings(config: HttpServerConfig): Settings {
  const settings: Settings = {
    maxConcurrentStreams: config.http2.maxConcurrentStreams,
    headerTableSize: config.http2.maxDecoderHeaderTableSize,
  };
  if (config.http2.maxReadFrameSize > 0) settings.maxFrameSize = config.http2.maxReadFrameSize;
  return settings;
}

/** A configured timeout as Node's timers take it: a longer one would fire at once, so it is cut to MAX_TIMER_MS. */
function timerMs(ms: number): number {
  return Math.min(ms, MAX_TIMER_MS);
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
    const listeners = entry.onReadTimeout;
    const i = listeners ? listeners.indexOf(listener) : -1;
    if (i < 0) return;
    // Usually the request's only reader: dropping the list spares splice, a call into the runtime.
    if (listeners!.length === 1) entry.onReadTimeout = undefined;
    else listeners!.splice(i, 1);
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
  // Real time, as Node's own socket timeouts are: these bound how long a client may take on the wire.
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
