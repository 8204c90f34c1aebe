/** How much a log record matters; the levels components log at. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * Where a component and the helpers it builds write log records: the runtime gives each component
 * one (tagged with its id), and the component passes it down.
 */
export type Log = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;

/**
 * A log that writes one logfmt-shaped line per record (`level=warn msg="…" key=value`) to a
 * stream; `debug` records only when `debug` is set. `rewrite` sees each finished line (the run
 * command hides URL credentials with it).
 */
export function streamLog(
  stream: { write(text: string): unknown },
  options: { readonly debug?: boolean; readonly rewrite?: (line: string) => string } = {},
): Log {
  return (level, message, fields) => {
    if (level === 'debug' && !options.debug) return;
    let line = `level=${level} msg=${JSON.stringify(message)}`;
    if (fields) for (const [k, v] of Object.entries(fields)) line += ` ${k}=${JSON.stringify(v)}`;
    stream.write(`${options.rewrite ? options.rewrite(line) : line}\n`);
  };
}
