/// <reference types="node" preserve="true" />
/**
 * Rivulet's public API: the entry model, the stage registry and pipeline builder, every built-in
 * stage as an RxJS operator factory, and the component runtime. Importing it registers every
 * built-in stage and component.
 */
export * from './core/entry.js';
export * from './core/clock.js';
export * from './lib/config/errors.js';
export {
  defineStage,
  stageDefinitions,
  unregisterStage,
  type StageDefinition,
  type StageImpl,
  type BuildContext,
  type StageOperator,
  type StageFactory,
  type StageFactoryConfig,
} from './core/stage.js';
export { loadStageModules, loadConfigStageModules } from './core/stage-modules.js';
export {
  ALL_NAMES,
  NO_NAMES,
  names,
  PER_ENTRY,
  type NameSet,
  type StagePartitioning,
  type StageState,
} from './core/stage-partitioning.js';
export { planPartitions, type PartitionPlan } from './core/threads/partitioning.js';
export { assertReadable, type Sandbox } from './core/sandbox.js';
export { pipeline, buildPipeline, type PipelineOptions } from './core/pipeline.js';
export { loadStageList, startProcessRun } from './core/process.js';
export {
  defineComponent,
  healthy,
  unhealthy,
  type Component,
  type ComponentArgs,
  type ComponentContext,
  type ComponentDefinition,
  type ComponentSpec,
  type ComponentValues,
} from './core/runtime/component.js';
export {
  ackedSource,
  forwardBatches,
  logSink,
  logSource,
  sendTo,
  SourceNotSubscribedError,
  type AckedSource,
  type LogBatch,
  type LogSink,
  type LogSource,
  type SourceRun,
} from './core/delivery.js';
export { processLogs, LogsProcessor } from './core/components/logs-processor.js';
export { forwardProfiles, profileSource, profilesSink, type ProfileSource } from './core/profile-delivery.js';
export type { ProfilesReceiver, PushSeries, IngestProfile } from './core/profiles.js';
export type { Label as ProfileLabel } from './lib/pyroscope/labels.js';
export type { Health } from './core/runtime/component.js';
export { fanOut, LOGS_RECEIVER, logsReceiverCapsule, RetryLaterError, type LogsReceiver, type SendOptions } from './core/receiver.js';
export type { RunOptions } from './core/runtime/standalone.js';
export { sharedRegistry } from './core/pipeline.js';
export { ComponentGraph } from './core/runtime/graph.js';
export { t, type BlockValues, type Checks, type FieldSpec, type FieldType, type NestedBlockSpec } from './lib/config/schema.js';
export {
  ensureLinearTimeFallback as enableLinearTimeRegex,
  linearTimeFallbackEnabled as linearTimeRegexEnabled,
} from './lib/regex/index.js';
export * from './operators/index.js';
export * from './receivers/index.js';
export * from './sinks/index.js';
export { logsProcessComponent } from './core/components/logs-process.js';
