import { setMaxListeners } from 'node:events';
import type { Socket } from 'node:net';
import { CanceledError } from '../../lib/go/context-errors.js';
import type { HttpRequest, HttpResponse } from '../http/server.js';

const byConnection = new WeakMap<Socket, AbortSignal>();

/**
 * A signal that aborts with CanceledError when the client goes away, as a request context is
 * cancelled in the reference. HTTP/1 requests share one signal per connection (a request in
 * flight ends with its connection, and keep-alive connections carry many requests, so this
 * saves a controller per request); an HTTP/2 request gets its own, tied to its stream.
 */
export function requestAborted(req: HttpRequest, res: HttpResponse): AbortSignal {
  if ('stream' in req) {
    const controller = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) controller.abort(new CanceledError());
    });
    return controller.signal;
  }
  const socket = req.socket;
  let signal = byConnection.get(socket);
  if (!signal) {
    const controller = new AbortController();
    signal = controller.signal;
    // Every receiver and writer attempt of a request listens on it at once (and removes its
    // listener when done); Node's leak warning at 10 listeners would misfire on a wide fan-out.
    setMaxListeners(0, signal);
    byConnection.set(socket, signal);
    socket.once('close', () => controller.abort(new CanceledError()));
  }
  return signal;
}
