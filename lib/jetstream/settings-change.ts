/**
 * What a running JetStream component (or its programmatic source or sink) does with new settings:
 * it takes them only when what it cannot change in place — its connection, the stream and its
 * layout — stays the same; otherwise the reload is refused with a ConfigError naming what cannot
 * change.
 */
import { ConfigError, type Position } from '../config/errors.js';

/** The settings a running component cannot change, and the refusal that says so. */
export interface FixedSettings<S> {
  /** The part of the settings that must stay the same, comparable as JSON. */
  readonly of: (settings: S) => unknown;
  readonly refusal: string;
}

/** `next`, when it keeps `fixed` as `previous` has it; a ConfigError at `pos` otherwise. */
export function acceptedSettings<S>(fixed: FixedSettings<S>, previous: S, next: S, pos: Position | undefined, path: readonly string[]): S {
  if (JSON.stringify(fixed.of(next)) !== JSON.stringify(fixed.of(previous))) throw new ConfigError(fixed.refusal, pos, path);
  return next;
}

/** What runs on such settings: the source's group reader, the writer. */
export interface Reconfigurable<S> {
  current(): S;
  update(next: S): void;
}

/**
 * Hands `next` to `target` as a reload (or a programmatic `update`) does: only when it keeps what
 * `fixed` names as `target` runs it; otherwise the ConfigError at `pos` is thrown and `target` runs
 * on unchanged.
 */
export function reconfigure<S>(
  target: Reconfigurable<S>,
  fixed: FixedSettings<S>,
  next: S,
  pos: Position | undefined,
  path: readonly string[],
): void {
  target.update(acceptedSettings(fixed, target.current(), next, pos, path));
}
