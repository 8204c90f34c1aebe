import type { Registry } from 'prom-client';
import type { Block } from '../../lib/config/ast.js';
import type { ConfigValue, EvalScope } from '../../lib/config/evaluate.js';
import type { Log } from '../../lib/log.js';
import type { Clock } from '../clock.js';
import type { DecodedBlock, BlockSpec } from '../../lib/config/schema.js';

/** A component's health as `/api/v0/components` reports it. */
export interface Health {
  readonly state: 'healthy' | 'unhealthy';
  readonly message: string;
  readonly updatedAt: Date;
}

export function healthy(message = 'started component'): Health {
  return { state: 'healthy', message, updatedAt: new Date() };
}

export function unhealthy(message: string): Health {
  return { state: 'unhealthy', message, updatedAt: new Date() };
}

/** What a component gets from the runtime. */
export interface ComponentContext {
  readonly id: string;
  readonly clock: Clock;
  /**
   * Where the component registers its metrics. A config graph gives each component a registry of
   * its own, served labelled with its `component_id` and `component_path` (see componentRegistry).
   */
  readonly registry: Registry;
  readonly log: Log;
  /** Where components that print (logs.echo) write by default. */
  readonly stdout: NodeJS.WritableStream;
  /**
   * logs.process spreads its stages over this many worker threads, split by stream (`rivulet run`
   * sets one per core). Without it, or with 1, pipelines run in place.
   */
  readonly pipelineThreads?: number;
}

/** The arguments a component receives: decoded attribute values plus its original block. */
export interface ComponentArgs {
  readonly values: Record<string, unknown>;
  readonly block: Block;
  readonly decoded: DecodedBlock;
  readonly scope: EvalScope;
  readonly path: readonly string[];
}

export interface Component {
  /** Values other components can reference: `<name>.<label>.<export>`. */
  readonly exports: Readonly<Record<string, ConfigValue>>;
  health(): Health;
  /** Applies new arguments (config reload). Must throw ConfigError(s) to reject them. */
  update(args: ComponentArgs): void;
  /** Starts background work (servers, readers). */
  start?(): Promise<void>;
  /** Stops accepting, flushes and drains. */
  stop(): Promise<void>;
}

export interface ComponentDefinition extends BlockSpec {
  /** `logs.process`, `logs.echo`. */
  readonly name: string;
  readonly doc: string;
  /**
   * A valid config showing the component in use, including any component it forwards to, for the
   * reference docs; without it the docs show a minimal block made from the required fields.
   */
  readonly example?: string;
  /** Names of the values it exports. */
  readonly exportNames: readonly string[];
  readonly build: (args: ComponentArgs, ctx: ComponentContext) => Component;
}

const components = new Map<string, ComponentDefinition>();

export function defineComponent(def: ComponentDefinition): ComponentDefinition {
  components.set(def.name, def);
  return def;
}

export function componentDefinition(name: string): ComponentDefinition | undefined {
  return components.get(name);
}

export function componentDefinitions(): ComponentDefinition[] {
  return [...components.values()].sort((a, b) => a.name.localeCompare(b.name));
}
