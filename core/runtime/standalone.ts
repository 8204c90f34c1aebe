import type { Registry } from 'prom-client';
import { streamLog, type Log } from '../../lib/log.js';
import { systemClock, type Clock } from '../clock.js';
import { sharedRegistry } from '../pipeline.js';
import type { ComponentContext } from './component.js';

/**
 * What a programmatic source or sink may be given; everything is optional. Without a registry it
 * counts on the registry programmatic pipelines share (`sharedRegistry()`), without a clock it
 * runs on the system clock, and without a log it writes warnings and errors to stderr.
 */
export interface RunOptions {
  /** The `component_id` its metric series and log records carry; defaults to the factory's name. */
  readonly id?: string;
  readonly registry?: Registry;
  readonly clock?: Clock;
  readonly log?: Log;
  /** Where it prints, for the sinks that print (echo); defaults to stdout. */
  readonly stdout?: NodeJS.WritableStream;
}

/** The component context a programmatic source or sink runs with, the same a config gives. */
export function standaloneContext(defaultId: string, options: RunOptions = {}): ComponentContext {
  const id = options.id ?? defaultId;
  const log = options.log ?? streamLog(process.stderr);
  return {
    id,
    clock: options.clock ?? systemClock(),
    registry: options.registry ?? sharedRegistry(),
    log: (level, message, fields) => log(level, message, { component: id, ...fields }),
    stdout: options.stdout ?? process.stdout,
  };
}
