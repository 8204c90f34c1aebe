/**
 * The one error mapping of receiver HTTP apps: handlers throw (`ctx.throw(status, message)`,
 * `httpError`) and the Koa middleware, or `writeGoError` for handlers served without a Koa
 * context, answers with the response the reference's Go server would write.
 * - 404: `404 page not found` (Go's not-found text);
 * - 405: no body (the reference's router answers a method mismatch with the bare status);
 * - anything else: the exposed message, or the status text, as `text/plain` plus a newline
 *   (Go's `http.Error`).
 */
import type { Middleware } from 'koa';
import type { HttpResponse } from './server.js';

/** Reason phrases as the reference's HTTP library spells them (they differ from Node's in places). */
const STATUS_TEXT: Readonly<Record<number, string>> = {
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

/** Koa's form: handlers throw (`ctx.throw`, `httpError`) and this middleware answers. */
export function goErrorResponses(onUnexpected: (err: unknown) => void = () => {}): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (caught) {
      const answer = goErrorAnswer(caught);
      if (answer.unexpected) onUnexpected(caught);
      ctx.status = answer.status;
      if (answer.text === undefined) {
        ctx.body = '';
        ctx.remove('Content-Type');
        return;
      }
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = answer.text;
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
  if (answer.text === undefined) {
    res.writeHead(answer.status, { 'Content-Length': '0' });
    res.end();
    return;
  }
  const body = Buffer.from(answer.text);
  res.writeHead(answer.status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
    'Content-Length': String(body.length),
  });
  res.end(body);
}
