/**
 * The one error mapping of receiver HTTP apps: handlers throw (`ctx.throw(status, message)`,
 * `httpError`) and the Koa middleware, or `writeGoError` for handlers served without a Koa
 * context, answers with the response the reference's Go server would write.
 * - 404: `404 page not found` (Go's not-found text);
 * - 405: no body (the reference's router answers a method mismatch with the bare status);
 * - anything else: the exposed message, or the status text, as `text/plain` plus a newline
 *   (Go's `http.Error`), with Go's server rules for the statuses that carry no body (`goErrorWire`).
 */
import type { Middleware } from 'koa';
import type { HttpResponse } from './server.js';

/**
 * Go's `http.StatusText` table, every code it knows (1xx to 5xx; 306 and the unassigned codes
 * are not in it). Its spellings are older than Node's in places (413, 414, 416, 422).
 */
const STATUS_TEXT: Readonly<Record<number, string>> = {
  100: 'Continue',
  101: 'Switching Protocols',
  102: 'Processing',
  103: 'Early Hints',
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  203: 'Non-Authoritative Information',
  204: 'No Content',
  205: 'Reset Content',
  206: 'Partial Content',
  207: 'Multi-Status',
  208: 'Already Reported',
  226: 'IM Used',
  300: 'Multiple Choices',
  301: 'Moved Permanently',
  302: 'Found',
  303: 'See Other',
  304: 'Not Modified',
  305: 'Use Proxy',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length Required',
  412: 'Precondition Failed',
  413: 'Request Entity Too Large',
  414: 'Request URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Requested Range Not Satisfiable',
  417: 'Expectation Failed',
  418: "I'm a teapot",
  421: 'Misdirected Request',
  422: 'Unprocessable Entity',
  423: 'Locked',
  424: 'Failed Dependency',
  425: 'Too Early',
  426: 'Upgrade Required',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  451: 'Unavailable For Legal Reasons',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  505: 'HTTP Version Not Supported',
  506: 'Variant Also Negotiates',
  507: 'Insufficient Storage',
  508: 'Loop Detected',
  510: 'Not Extended',
  511: 'Network Authentication Required',
};

/** Go's `http.StatusText`: the reason phrase, or `''` for a code it does not know. */
export function statusText(status: number): string {
  return STATUS_TEXT[status] ?? '';
}

/**
 * An error the middleware answers with exactly `status` and `message`. Unlike `ctx.throw`, any
 * status is kept (a downstream's 3xx or 2xx is passed back as the reference passes it).
 */
export function httpError(status: number, message: string): Error {
  return Object.assign(new Error(message), { status, expose: true });
}

interface ThrownHttpError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  message?: string;
}

/** What Go's server writes for an error: the status and, except for 405, a plain-text body. */
export interface GoErrorAnswer {
  readonly status: number;
  /** Undefined for the bare-status answers (405). */
  readonly text?: string;
  /** The error carried no status of its own: a bug or an unexpected failure, worth a log line. */
  readonly unexpected: boolean;
}

export function goErrorAnswer(caught: unknown): GoErrorAnswer {
  const err = (caught ?? {}) as ThrownHttpError;
  const own = typeof err.status === 'number' ? err.status : typeof err.statusCode === 'number' ? err.statusCode : undefined;
  const status = own ?? 500;
  if (status === 405) return { status, unexpected: own === undefined };
  const text = status === 404 ? '404 page not found' : err.expose && err.message !== undefined ? err.message : statusText(status);
  return { status, text: `${text}\n`, unexpected: own === undefined };
}

/**
 * What Go's server puts on the wire for an answer. `http.Error` sets the plain-text type and
 * nosniff and writes the text; the server then sends the statuses that carry no body (1xx, 204,
 * 304) without Content-Length and without the body, and 304 without Content-Type either. An
 * interim 1xx other than 101 is sent at once and the text written after it goes out under an
 * implicit 200: Node has no way to send an arbitrary interim answer, so only that final 200 is
 * written. (The writer never hands on a 1xx: Node's client, like Go's, waits past interim answers.)
 */
export interface GoErrorWire {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Undefined when the status carries no body. */
  readonly body?: Buffer;
}

const PLAIN_TEXT = { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' };

export function goErrorWire(answer: GoErrorAnswer): GoErrorWire {
  const { status, text } = answer;
  if (text === undefined) return { status, headers: { 'Content-Length': '0' }, body: Buffer.alloc(0) };
  if (status >= 100 && status <= 199 && status !== 101) return plainText(200, text);
  if (status === 304) return { status, headers: { 'X-Content-Type-Options': 'nosniff' } };
  if (status === 204 || status === 101) return { status, headers: PLAIN_TEXT };
  return plainText(status, text);
}

function plainText(status: number, text: string): GoErrorWire {
  const body = Buffer.from(text);
  return { status, headers: { ...PLAIN_TEXT, 'Content-Length': String(body.length) }, body };
}

/** Koa's form: handlers throw (`ctx.throw`, `httpError`) and this middleware answers, as writeGoError does. */
export function goErrorResponses(onUnexpected: (err: unknown) => void = () => {}): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (caught) {
      // Written by hand, not through ctx.body: Koa would drop the Content-Type Go keeps on a 204
      // and could not send Go's reason phrases or its answer to a 1xx.
      ctx.respond = false;
      writeGoError(ctx.res, caught, onUnexpected);
    }
  };
}

/**
 * The same answer written straight to a Node response, for handlers that run without a Koa
 * context. A response already under way cannot change its status, so its connection is dropped.
 */
export function writeGoError(res: HttpResponse, caught: unknown, onUnexpected: (err: unknown) => void = () => {}): void {
  const answer = goErrorAnswer(caught);
  if (answer.unexpected) onUnexpected(caught);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  writeWire(res, goErrorWire(answer));
}

/** A redirect as a Go handler writes it with only a status and `Location`: no body, no type. */
export function writeGoRedirect(res: HttpResponse, status: number, location: string): void {
  writeWire(res, { status, headers: { Location: location, 'Content-Length': '0' } });
}

/**
 * What Go's server writes, before any handler runs, for a request it cannot parse (a broken
 * `%` escape in the path): a bare 400 with its name as the text, and the connection closed.
 */
export function writeGoUnparsableRequest(res: HttpResponse): void {
  const body = Buffer.from('400 Bad Request');
  const headers = { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(body.length) };
  // HTTP/2 has no connection-level header; the stream ends with the answer.
  writeWire(res, { status: 400, headers: 'stream' in res ? headers : { ...headers, Connection: 'close' }, body });
}

/** Go's status line names a code by its own table (older spellings than Node's), or `status code N`. */
function reasonPhrase(status: number): string {
  return statusText(status) || `status code ${status}`;
}

function writeWire(res: HttpResponse, wire: GoErrorWire): void {
  // HTTP/2 has no reason phrase (Node warns when given one).
  if ('stream' in res) res.writeHead(wire.status, wire.headers);
  else res.writeHead(wire.status, reasonPhrase(wire.status), wire.headers);
  if (wire.body === undefined) res.end();
  else res.end(wire.body);
}
