/// <reference types="node" preserve="true" />
/**
 * `rivulet/testing`: the property-testing kit for stages, built-in or custom.
 *
 * - arbitraries (fast-check) for label names and values, label sets, log lines of the real
 *   formats, timestamps, entries, streams of entries with arrival times, and stage configs
 *   generated from a stage's field schema (`stageConfig`);
 * - invariant helpers that throw readable counterexamples: `neverAddsEntries`, `preservesOrder`,
 *   `idempotent`, `doesNotTouch`, `outputWithinBounds`, `configErrorsArePositioned`;
 * - `stageCompliance`, the suite every stage passes;
 * - virtual time: `runStage` on a ManualClock and `marbles` on an RxJS TestScheduler.
 *
 * @example
 * import { neverAddsEntries, stageCompliance } from 'rivulet/testing';
 * for (const check of stageCompliance(maskEmail)) it(check.name, check.run);
 * it('never adds entries', () => neverAddsEntries(maskEmail, { keep_domain: true }));
 */
export {
  anyCharacter,
  entry,
  entryStream,
  extractedValue,
  labelName,
  labelSet,
  labelValue,
  structuredMetadata,
  timestampNs,
  type EntryOptions,
  type EntryStreamOptions,
  type LabelNameOptions,
  type LabelSetOptions,
  type LabelValueOptions,
  type TimedEntry,
  type TimestampOptions,
} from './arbitraries.js';
export {
  ansiLine,
  criLine,
  dockerLine,
  invalidUtf8Line,
  jsonLine,
  logfmtLine,
  logLine,
  plainText,
  stackTrace,
  stackTraceLines,
  unicodeText,
} from './log-lines.js';
export { renderValue, stageConfig, type GeneratedConfig, type StageConfigOptions } from './stage-config.js';
export {
  configErrorsArePositioned,
  doesNotTouch,
  idempotent,
  InvariantError,
  neverAddsEntries,
  outputWithinBounds,
  preservesOrder,
  type ConfigArg,
  type ConfigErrorOptions,
  type InvariantOptions,
  type OrderOptions,
} from './invariants.js';
export {
  checkStageCompliance,
  stageCompliance,
  type ComplianceCheck,
  type ComplianceOptions,
  type ComplianceResult,
} from './compliance.js';
export { marbles, type MarbleHelpers, type MarbleOptions } from './marbles.js';
export {
  DEFAULT_START_NS,
  droppedLines,
  runStage,
  seededRandom,
  stageSpec,
  type RunStageOptions,
  type StageConfigInput,
  type StageRun,
} from './run-stage.js';
export { describeEntry, entryDifferences, type EntryField } from './describe.js';
