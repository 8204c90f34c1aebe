/**
 * The one error middleware of receiver HTTP apps: handlers throw `ctx.throw(status, message)` and
 * this maps the error to the response the reference's Go server would write.
 * - 404: `404 page not found` (Go's not-found text);
 * - 405: no body (the reference's router answers a method mismatch with the bare status);
 * - anything else: the exposed message, or the status text, as `text/plain` plus a newline
 *   (Go's `http.Error`).
 */
import type { Middleware } from 'koa';

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

export function goErrorResponses(onUnexpected: (err: unknown) => void = () => {}): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (caught) {
      const err = caught as ThrownHttpError;
      const status = err.status ?? err.statusCode ?? 500;
      if (!(typeof err.status === 'number' || typeof err.statusCode === 'number')) onUnexpected(caught);
      ctx.status = status;
      if (status === 405) {
        ctx.body = '';
        ctx.remove('Content-Type');
        return;
      }
      const text = status === 404 ? '404 page not found' : err.expose && err.message !== undefined ? err.message : statusText(status);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = `${text}\n`;
    }
  };
}
