/**
 * Custom stage modules: ES modules (TypeScript or JavaScript) that define stages with the same
 * `defineStage` the built-in stages use and export what it returns. Loading a module registers
 * its stages, so config files (`stage.<name> { … }`), the programmatic API and the playground can
 * use them. The CLI loads them from `--stages PATH` and from `stages.import` blocks; the
 * playground server goes through the same `loadStageModules`.
 */
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Block } from '../lib/config/ast.js';
import type { EvalScope } from '../lib/config/evaluate.js';
import { parseConfig } from '../lib/config/parser.js';
import { ConfigError, ConfigErrors, type Position } from '../lib/config/errors.js';
import { aliasPackagesToBundle } from './package-aliases.js';
import { blockTitle, decodeBlock, t, type BlockSpec } from '../lib/config/schema.js';
import { defineStage, stageDefinition, stageDefinitions, type StageDefinition } from './stage.js';
import { componentDefinition } from './runtime/component.js';

/**
 * The top-level block that names a stage module in a config file, in the agent's block style:
 *
 * ```
 * stages.import "mask" {
 *   path = "./custom-stages/mask_email.ts"
 * }
 * ```
 *
 * `path` is relative to the config file. The component graph and `loadStageList` skip the block;
 * whoever loads the config loads the module first (`loadConfigStageModules`).
 */
export const STAGE_IMPORT_BLOCK = 'stages.import';

const stageImportSpec: BlockSpec = {
  fields: {
    path: { kind: t.string, required: true, doc: 'Module defining custom stages, relative to the config file.' },
  },
};

/** What loading one module registered. */
export interface LoadedStageModule {
  /** The path as given. */
  readonly path: string;
  /** The absolute file the path resolved to. */
  readonly file: string;
  /** Names of the stages it exports (`mask_email`), in export order. */
  readonly stages: readonly string[];
  /** Names of the components it defined and exports (`custom.counter`), in export order; absent when none. */
  readonly components?: readonly string[];
}

/** A module that could not be imported, exports no stage, or clashes with a registered stage. */
export class StageModuleError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`stage module ${JSON.stringify(path)}: ${reason}`);
    this.name = 'StageModuleError';
  }
}

/**
 * Imports each module (paths relative to `baseDir`) and registers the stages it exports: the
 * factories `defineStage` returns, or plain stage definitions. Importing twice is harmless; a
 * stage name that another definition already holds (a built-in's, say) is an error.
 *
 * @example
 * await loadStageModules(['./custom-stages/mask_email.ts'], process.cwd());
 * // → [{ path: './custom-stages/mask_email.ts', file: '/…/mask_email.ts', stages: ['mask_email'] }]
 */
export async function loadStageModules(paths: readonly string[], baseDir: string): Promise<LoadedStageModule[]> {
  const loaded: LoadedStageModule[] = [];
  for (const path of paths) loaded.push(await loadStageModule(path, baseDir));
  return loaded;
}

/** The stage definitions each loaded module registered, and the names of its components, by its absolute file. */
const loadedModules = new Map<string, { readonly stages: readonly StageDefinition<any>[]; readonly components: readonly string[] }>();

/**
 * The files of the loaded modules whose stages are still registered, or that define components:
 * what another thread (a pipeline thread, a shard, the playground's run workers) loads to see the
 * same custom stages and components.
 */
export function loadedStageModuleFiles(): string[] {
  return [...loadedModules]
    .filter(([, { stages, components }]) => components.length > 0 || stages.some((def) => stageDefinition(def.name) === def))
    .map(([file]) => file);
}

/** Modules whose import registers stages, besides the stage modules loaded here, with what they registered. */
const registrars = new Map<string, readonly StageDefinition<any>[]>();

/**
 * Says that importing `moduleUrl` registers stages, as the built-in stages' module says of itself
 * once it has registered them, so another thread (a pipeline thread) imports it to know the same.
 */
export function registersStages(moduleUrl: string): void {
  registrars.set(moduleUrl, stageDefinitions());
}

/** The modules declared with `registersStages`, in the order they were. */
export function stageRegistrars(): string[] {
  return [...registrars.keys()];
}

/**
 * Whether a thread that imports the registrars and loads the stage modules loaded here knows
 * `def`: not when a program defined the stage itself, outside any module.
 */
export function definedInModule(def: { readonly name: string }): boolean {
  return [...registrars.values(), ...[...loadedModules.values()].map((m) => m.stages)].some((defs) => defs.some((d) => d === def));
}

const TYPESCRIPT_MODULE = /\.[cm]?tsx?$/;
let typeScriptLoader: Promise<void> | undefined;

/**
 * Plain Node cannot import `.ts` files: the built package registers tsx's loader the first time
 * a TypeScript stage module is loaded. tsx is an optional peer dependency, needed only for this;
 * `.js`/`.mjs` modules load without it. Sources run under a TypeScript loader already (tests, a
 * checkout under tsx) and need nothing.
 */
async function ensureTypeScriptLoader(path: string): Promise<void> {
  if (!import.meta.url.endsWith('.js')) return;
  typeScriptLoader ??= import('tsx/esm/api').then(
    (tsx) => {
      tsx.register();
    },
    () => {
      typeScriptLoader = undefined;
      throw new Error('no TypeScript loader');
    },
  );
  try {
    await typeScriptLoader;
  } catch {
    throw new StageModuleError(path, 'is TypeScript, which needs tsx to load: npm install tsx (or compile the module to .js)');
  }
}

async function loadStageModule(path: string, baseDir: string): Promise<LoadedStageModule> {
  const file = resolve(baseDir, path);
  let exports: Record<string, unknown>;
  // Before tsx's loader, so tsx's resolve runs first and hands bare specifiers on to the aliases.
  aliasPackagesToBundle();
  if (TYPESCRIPT_MODULE.test(file)) await ensureTypeScriptLoader(path);
  try {
    exports = (await unlessLoopDrains(import(pathToFileURL(file).href), path)) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof StageModuleError) throw err;
    throw new StageModuleError(path, `cannot be loaded: ${(err as Error).message ?? String(err)}`);
  }
  const definitions = stageDefinitionsIn(exports);
  // A module may define components too (defineComponent registers them as it runs): they are
  // usable in the config once it is loaded.
  const components = componentsIn(exports);
  if (definitions.length === 0 && components.length === 0)
    throw new StageModuleError(path, 'exports no stage; export the factory that defineStage returns');
  for (const def of definitions) {
    try {
      // Registers a definition that is not registered yet; a no-op for one already registered.
      defineStage(def);
    } catch (err) {
      throw new StageModuleError(path, (err as Error).message);
    }
  }
  loadedModules.set(file, { stages: definitions, components });
  return { path, file, stages: definitions.map((d) => d.name), ...(components.length > 0 ? { components } : {}) };
}

const NEVER_SETTLES = 'cannot be loaded: its top-level await waits on a promise that never settles';

/**
 * Settles as `loading` does, or rejects with a StageModuleError once the event loop has nothing
 * left to run while it is still pending: a module whose top level awaits a promise nothing will
 * settle. Node would otherwise end the process there with status 13 and no message.
 */
function unlessLoopDrains<T>(loading: Promise<T>, path: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onDrained = () => reject(new StageModuleError(path, NEVER_SETTLES));
    process.once('beforeExit', onDrained);
    loading.then(resolve, reject).finally(() => process.off('beforeExit', onDrained));
  });
}

/** Stage definitions among a module's exports, each once, in export order. */
function stageDefinitionsIn(exports: Record<string, unknown>): StageDefinition<any>[] {
  const found: StageDefinition<any>[] = [];
  for (const value of Object.values(exports)) {
    const def = asStageDefinition(value);
    if (def && !found.includes(def)) found.push(def);
  }
  return found;
}

/** Names of the registered components among a module's exports, each once, in export order. */
function componentsIn(exports: Record<string, unknown>): string[] {
  const names = Object.values(exports).flatMap((value) => (isComponentDefinition(value) ? [value.name] : []));
  return [...new Set(names)];
}

function isComponentDefinition(value: unknown): value is { readonly name: string } {
  return typeof value === 'object' && value !== null && componentDefinition((value as { name?: unknown }).name as string) === value;
}

function asStageDefinition(value: unknown): StageDefinition<any> | undefined {
  if (typeof value === 'function' && 'definition' in value) return asStageDefinition((value as { definition: unknown }).definition);
  if (value === null || typeof value !== 'object' || isComponentDefinition(value)) return undefined;
  const candidate = value as Partial<StageDefinition<any>>;
  if (typeof candidate.name === 'string' && typeof candidate.build === 'function' && typeof candidate.fields === 'object')
    return candidate as StageDefinition<any>;
  return undefined;
}

/** One `stages.import` block of a config. */
export interface StageImport {
  readonly label: string;
  readonly path: string;
  /** Where the block is, for errors that concern the whole import. */
  readonly block: Block;
  /** Where the `path` attribute is written. */
  readonly pathPos: Position;
}

/** Reads the `stages.import` blocks of a config, with positioned errors. Nothing is loaded. */
export function stageImportsOf(text: string, file: string): StageImport[] {
  const ast = parseConfig(text, file);
  const errors: ConfigError[] = [];
  const imports: StageImport[] = [];
  const seen = new Map<string, Block>();
  for (const stmt of ast.body) {
    if (stmt.kind !== 'block' || stmt.name !== STAGE_IMPORT_BLOCK) continue;
    if (stmt.label === undefined) {
      errors.push(new ConfigError(`block "${STAGE_IMPORT_BLOCK}" needs a label: ${STAGE_IMPORT_BLOCK} "NAME" { path = "…" }`, stmt.pos));
      continue;
    }
    const earlier = seen.get(stmt.label);
    if (earlier) {
      errors.push(
        new ConfigError(`${blockTitle(stmt)} already declared at ${earlier.pos.file}:${earlier.pos.line}:${earlier.pos.col}`, stmt.pos),
      );
      continue;
    }
    seen.set(stmt.label, stmt);
    try {
      const decoded = decodeBlock(stmt, stageImportSpec, environmentScope(), [blockTitle(stmt)]);
      imports.push({ label: stmt.label, path: decoded.values.path as string, block: stmt, pathPos: decoded.positions.get('path')! });
    } catch (err) {
      if (err instanceof ConfigErrors) errors.push(...err.errors);
      else if (err instanceof ConfigError) errors.push(err);
      else throw err;
    }
  }
  if (errors.length > 0) throw new ConfigErrors(errors);
  return imports;
}

/**
 * Loads the modules a config's `stages.import` blocks name, each path relative to the config
 * file's folder. Throws ConfigErrors placed at the `path` attribute of every import that failed.
 */
export async function loadConfigStageModules(text: string, file: string): Promise<LoadedStageModule[]> {
  const imports = stageImportsOf(text, file);
  const loaded: LoadedStageModule[] = [];
  const errors: ConfigError[] = [];
  for (const imp of imports) {
    try {
      loaded.push(...(await loadStageModules([imp.path], dirname(file))));
    } catch (err) {
      if (!(err instanceof StageModuleError)) throw err;
      errors.push(new ConfigError(err.message, imp.pathPos, [blockTitle(imp.block)]));
    }
  }
  if (errors.length > 0) throw new ConfigErrors(errors);
  return loaded;
}

/** An import path may read the environment but no component: modules load before any is built. */
function environmentScope(): EvalScope {
  return { resolve: () => undefined, env: (name) => process.env[name] };
}
