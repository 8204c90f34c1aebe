import { parseGoDuration } from '../lib/go/duration.js';
import { parseArgs, UsageError } from './args.js';
import type { Io } from './io.js';
import { componentFlows, flowTable, type ComponentFlow } from './top-table.js';

/** Where `rivulet top` reads unless `--url` says. */
export const DEFAULT_TOP_URL = 'http://127.0.0.1:12345';

/** Clears a terminal and puts the cursor top left, so each frame replaces the last. */
const CLEAR_SCREEN = '\x1b[H\x1b[2J';

/** Options a test gives instead of a terminal and real time. */
export interface TopOptions {
  /** Whether stdout is a terminal (default: what `io.stdout.isTTY` says). */
  readonly isTTY?: boolean;
  /** Waits `ms` (default: a timer); resolves early when the command stops. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Milliseconds now (default: performance.now). */
  readonly now?: () => number;
}

/**
 * `rivulet top [--url URL] [--interval DURATION] [--once]`: a table of every component of a
 * running instance with its entries in, out and dropped and their rates a second, read from the
 * instance's `/metrics` (which series give which column: top-table.ts). On a terminal it redraws
 * every interval until SIGINT/SIGTERM (0); with `--once`, or when stdout is not a terminal, it
 * reads twice an interval apart, prints one table and exits 0. An instance that does not answer
 * exits 3 (in the live view it is shown and asked again at the next interval).
 */
export async function topCommand(
  argv: readonly string[],
  io: Io,
  signals: NodeJS.EventEmitter = process,
  options: TopOptions = {},
): Promise<number> {
  const args = parseArgs(argv, ['once'], ['url', 'interval']);
  if (args.positional.length > 0) throw new UsageError(`top takes no arguments, got ${JSON.stringify(args.positional[0])}`);
  const base = (args.flags.get('url') as string | undefined) ?? DEFAULT_TOP_URL;
  let metricsUrl: URL;
  try {
    metricsUrl = new URL('/metrics', base);
  } catch {
    throw new UsageError(`invalid --url ${JSON.stringify(base)}, expected an address like ${DEFAULT_TOP_URL}`);
  }
  const intervalText = (args.flags.get('interval') as string | undefined) ?? '1s';
  let intervalMs: number;
  try {
    intervalMs = Number(parseGoDuration(intervalText)) / 1e6;
  } catch {
    intervalMs = Number.NaN;
  }
  if (!(intervalMs > 0)) throw new UsageError(`invalid --interval ${JSON.stringify(intervalText)}, expected a positive duration like 1s`);
  const live = !args.flags.has('once') && (options.isTTY ?? Boolean((io.stdout as { isTTY?: boolean }).isTTY));
  const now = options.now ?? (() => performance.now());
  const sleep = options.sleep ?? sleepFor;

  const stopping = new AbortController();
  const onStop = () => stopping.abort();
  signals.on('SIGINT', onStop);
  signals.on('SIGTERM', onStop);
  try {
    const read = async (): Promise<{ flows: Map<string, ComponentFlow>; at: number }> => {
      const res = await fetch(metricsUrl, { signal: stopping.signal });
      if (!res.ok) throw new Error(`${metricsUrl} answered HTTP ${res.status}`);
      return { flows: componentFlows(await res.text()), at: now() };
    };
    if (!live) {
      let first: Awaited<ReturnType<typeof read>>;
      let second: Awaited<ReturnType<typeof read>>;
      try {
        first = await read();
        await sleep(intervalMs, stopping.signal);
        second = await read();
      } catch (err) {
        if (stopping.signal.aborted) return 0;
        io.stderr.write(`rivulet top: cannot read ${metricsUrl}: ${messageOf(err)}\n`);
        return 3;
      }
      io.stdout.write(flowTable(second.flows, first.flows, (second.at - first.at) / 1000));
      return 0;
    }
    let previous: Awaited<ReturnType<typeof read>> | undefined;
    while (!stopping.signal.aborted) {
      let frame: string;
      try {
        const current = await read();
        frame = flowTable(current.flows, previous?.flows, previous ? (current.at - previous.at) / 1000 : 0);
        previous = current;
      } catch (err) {
        if (stopping.signal.aborted) break;
        frame = `cannot read ${metricsUrl}: ${messageOf(err)}\n`;
        previous = undefined;
      }
      io.stdout.write(`${CLEAR_SCREEN}rivulet top: ${base}, every ${intervalText} (Ctrl-C to quit)\n\n${frame}`);
      await sleep(intervalMs, stopping.signal);
    }
    return 0;
  } finally {
    signals.off('SIGINT', onStop);
    signals.off('SIGTERM', onStop);
  }
}

function messageOf(err: unknown): string {
  const cause = (err as { cause?: { message?: string } }).cause?.message;
  return cause ?? (err instanceof Error ? err.message : String(err));
}

function sleepFor(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
