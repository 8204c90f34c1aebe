/**
 * Rivulet's public API: the entry model, the stage registry and pipeline builder, every built-in
 * stage as an RxJS operator factory, and the component runtime. Importing it registers every
 * built-in stage and component.
 */
export * from './core/entry';
export * from './core/clock';
export * from './core/errors';
export { defineStage, stageDefinitions, unregisterStage, type StageDefinition, type StageImpl, type BuildContext, type StageOperator } from './core/stage';
export { loadStageModules, loadConfigStageModules } from './core/stage-modules';
export { pipeline, buildPipeline, type PipelineOptions } from './core/pipeline';
export { loadStageList, startProcessRun } from './core/process';
export { defineComponent } from './core/runtime/component';
export { ComponentGraph } from './core/runtime/graph';
export { t, type FieldSpec, type FieldType } from './core/schema';
export * from './operators';
export * from './receivers';
export * from './sinks';
export { logsProcessComponent } from './core/components/logs_process';
export { main } from './core/cli/main';
