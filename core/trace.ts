import type { Entry } from './entry.js';

/** A stage's effect on one entry, reported when a pipeline is built with a tracer. */
export interface StageTrace {
  /** Block path of the stage (`stage.match > stage.json`). */
  readonly path: readonly string[];
  /** The entry as it entered the stage (a copy), or null when the stage produced a new entry. */
  readonly before: Entry | null;
  /** The entry as it left the stage (a copy), or null when the stage dropped or held it. */
  readonly after: Entry | null;
}

/**
 * Receives stage-by-stage events for `rivulet process --inspect` and the playground. Tracing
 * copies entries around every stage, so it is only wired in when asked for.
 */
export interface PipelineTracer {
  stage(event: StageTrace): void;
}
