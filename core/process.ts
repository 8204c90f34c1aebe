import { didYouMean } from '../lib/suggest.js';
import type { Registry } from 'prom-client';
import { Inlet } from './inlet.js';
import type { Clock } from './clock.js';
import type { HandBack } from './hand-back.js';
import type { InputTime } from './input-time.js';
import type { Block, ConfigFile } from '../lib/config/ast.js';
import { parseConfig } from '../lib/config/parser.js';
import type { EvalScope } from '../lib/config/evaluate.js';
import { seedLabels, type Entry } from './entry.js';
import { ConfigError, ConfigErrors } from '../lib/config/errors.js';
import { buildPipeline, ingress } from './pipeline.js';
import { componentId } from './runtime/graph.js';
import { blockTitle } from '../lib/config/schema.js';
import { decodeStageBlocks, type StageSpec } from './stage.js';
import { STAGE_IMPORT_BLOCK } from './stage-modules.js';
import type { Sandbox } from './sandbox.js';
import type { PipelineTracer } from './trace.js';

/**
 * Reads the stage list of a config meant for `rivulet process`: either one `logs.process "NAME"`
 * block (its `forward_to`, if any, is ignored) or a bare sequence of `stage.*` blocks, either
 * way alongside any `stages.import` blocks (skipped here: `loadConfigStageModules` loads them).
 */
export function loadStageList(text: string, file: string, scope: EvalScope = standaloneScope()): StageSpec[] {
  return loadProcessConfig(text, file, scope).stages;
}

/**
 * `loadStageList` with the id of the logs.process block the stages were written in
 * (`logs.process.NAME`; undefined for a bare stage list), for labelling the run's metrics as the
 * component's.
 */
export function loadProcessConfig(
  text: string,
  file: string,
  scope: EvalScope = standaloneScope(),
): { readonly stages: StageSpec[]; readonly componentId?: string } {
  const ast: ConfigFile = parseConfig(text, file);
  // `stages.import` blocks name custom stage modules, loaded before the list is read.
  const blocks = ast.body.filter((s): s is Block => s.kind === 'block' && s.name !== STAGE_IMPORT_BLOCK);
  const attrs = ast.body.filter((s) => s.kind === 'attribute');
  if (attrs.length > 0)
    throw new ConfigErrors(
      attrs.map(
        (a) => new ConfigError(`unexpected attribute "${a.name}" at the top level; expected stage blocks or one logs.process block`, a.pos),
      ),
    );
  const processBlocks = blocks.filter((b) => b.name === 'logs.process');
  if (processBlocks.length > 0) {
    if (blocks.length !== 1) {
      const extra = blocks.find((b) => b !== processBlocks[0])!;
      throw new ConfigErrors([new ConfigError(`expected a single logs.process block, found also ${blockTitle(extra)}`, extra.pos)]);
    }
    const block = processBlocks[0]!;
    const path = [blockTitle(block)];
    const errors: ConfigError[] = [];
    for (const stmt of block.body) {
      if (stmt.kind === 'attribute' && stmt.name !== 'forward_to')
        errors.push(new ConfigError(`unrecognized attribute name "${stmt.name}"${didYouMean(stmt.name, ['forward_to'])}`, stmt.pos, path));
      if (stmt.kind === 'block' && !stmt.name.startsWith('stage.'))
        errors.push(new ConfigError(`unrecognized block name "${stmt.name}"`, stmt.pos, path));
    }
    if (errors.length > 0) throw new ConfigErrors(errors);
    const stages = decodeStageBlocks(
      block.body.filter((s) => s.kind === 'block').map((b) => ({ block: b as never, path: [...path, blockTitle(b as never)] })),
      scope,
    );
    return { stages, componentId: componentId(block) };
  }
  const stages = decodeStageBlocks(
    blocks.map((b) => ({ block: b, path: [blockTitle(b)] })),
    scope,
  );
  return { stages };
}

/** Resolves nothing but the environment: a standalone stage list has no components to reference. */
export function standaloneScope(): EvalScope {
  return { resolve: () => undefined, env: (name) => process.env[name] };
}

export interface ProcessRun {
  /** Sends one entry through the pipeline (copied and label-seeded first, like a component). */
  push(entry: Entry): void;
  /** Sends an entry nobody else holds (a copy received from another thread): seeded, not copied. */
  pushOwned(entry: Entry): void;
  /** Settles once no stage holds entries back for timing reasons (a waiting limit). */
  pending(): Promise<void>;
  /** Settles once every entry held when called (an open multiline block) has been sent on. */
  held(): Promise<void>;
  /** Ends the input: stateful stages flush, then the run completes. */
  end(): void;
  dispose(): void;
}

export interface ProcessRunOptions {
  readonly clock: Clock;
  /** The time idle input is measured on (see core/input-time.ts); the clock's time when absent. */
  readonly input?: InputTime;
  /** The hand-back of the batch being pushed now (see `BuildContext.currentHandBack`). */
  readonly currentHandBack?: () => HandBack | undefined;
  readonly registry: Registry;
  readonly trace?: PipelineTracer;
  readonly random?: () => number;
  readonly onEntry: (entry: Entry) => void;
  readonly onComplete?: () => void;
  readonly debug?: (message: string, fields?: Record<string, unknown>) => void;
  /** Limits for a config nobody vetted (whose stage list is read with `sandboxScope()`). */
  readonly sandbox?: Sandbox;
}

/**
 * Runs a stage list the way a `logs.process` component runs it, collecting what it forwards. The
 * CLI's `process` command, the conformance suite and the playground all go through here.
 */
export function startProcessRun(specs: readonly StageSpec[], options: ProcessRunOptions): ProcessRun {
  const built = buildPipeline(specs, options);
  const input = new Inlet<Entry>();
  const subscription = built.operator(input).subscribe({
    next: options.onEntry,
    complete: () => options.onComplete?.(),
  });
  return {
    push: (entry) => input.next(ingress(entry)),
    pushOwned: (entry) => {
      seedLabels(entry);
      input.next(entry);
    },
    pending: () => built.pending(),
    held: () => built.held(),
    end: () => input.complete(),
    dispose: () => {
      subscription.unsubscribe();
      built.dispose();
    },
  };
}
