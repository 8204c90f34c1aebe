/** How much a log record matters; the levels components log at. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * Where a component and the helpers it builds write log records: the runtime gives each component
 * one (tagged with its id), and the component passes it down.
 */
export type Log = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;
