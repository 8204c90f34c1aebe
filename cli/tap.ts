import { request } from 'node:http';
import { parseArgs, UsageError } from './args.js';
import type { Io } from './io.js';
import { DEFAULT_LISTEN_ADDR, parseListenAddr } from './run.js';

/**
 * `rivulet tap ID [--direction in|out] [--server.http.listen-addr HOST:PORT] [--rate N]`: prints,
 * one JSON line each, a sample of the entries passing through component ID of a running `rivulet
 * run` — what is sent to its receiver (`in`) or what it forwards (`out`; the default for a
 * component that forwards, `in` for a sink) — until the instance stops (0) or SIGINT/SIGTERM (0).
 * An unknown component, or a direction it does not have, exits 2; an instance that does not
 * answer 3.
 */
export async function tapCommand(argv: readonly string[], io: Io, signals: NodeJS.EventEmitter = process): Promise<number> {
  const args = parseArgs(argv, [], ['server.http.listen-addr', 'rate', 'direction']);
  const id = args.positional[0];
  if (!id || args.positional.length > 1) throw new UsageError('tap needs exactly one component ID');
  const { host, port } = parseListenAddr((args.flags.get('server.http.listen-addr') as string | undefined) ?? DEFAULT_LISTEN_ADDR);
  const rate = args.flags.get('rate') as string | undefined;
  if (rate !== undefined && !(Number(rate) > 0)) throw new UsageError(`invalid --rate ${JSON.stringify(rate)}, expected a positive number`);
  const direction = args.flags.get('direction') as string | undefined;
  if (direction !== undefined && direction !== 'in' && direction !== 'out') {
    throw new UsageError(`invalid --direction ${JSON.stringify(direction)}, expected in or out`);
  }
  const connectHost = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  const query = new URLSearchParams();
  if (direction !== undefined) query.set('direction', direction);
  if (rate !== undefined) query.set('rate', rate);
  const path = `/api/v0/tap/${encodeURIComponent(id)}${query.toString() === '' ? '' : `?${query}`}`;
  return new Promise<number>((resolve) => {
    let finished = false;
    const finish = (code: number) => {
      if (finished) return;
      finished = true;
      signals.off('SIGINT', onStop);
      signals.off('SIGTERM', onStop);
      req.destroy();
      resolve(code);
    };
    const onStop = () => finish(0);
    signals.on('SIGINT', onStop);
    signals.on('SIGTERM', onStop);
    const req = request({ host: connectHost, port, path, method: 'GET' }, (res) => {
      if (res.statusCode !== 200) {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          io.stderr.write(`rivulet tap: ${body.trim() || `HTTP ${res.statusCode}`}\n`);
          finish(2);
        });
        return;
      }
      res.on('data', (chunk: Buffer) => {
        // Reading pauses while stdout is full; the server drops tap entries meanwhile.
        if (!io.stdout.write(chunk)) {
          res.pause();
          io.stdout.once('drain', () => res.resume());
        }
      });
      res.on('end', () => finish(0));
      res.on('error', () => finish(0));
    });
    req.on('error', (err) => {
      if (finished) return;
      io.stderr.write(`rivulet tap: cannot reach ${connectHost}:${port}: ${err.message}\n`);
      finish(3);
    });
    req.end();
  });
}
