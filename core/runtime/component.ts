import type { Registry } from 'prom-client';
import type { Block } from '../../lib/config/ast.js';
import type { ConfigValue, EvalScope } from '../../lib/config/evaluate.js';
import type { ConfigError } from '../../lib/config/errors.js';
import type { Log } from '../../lib/log.js';
import type { Clock } from '../clock.js';
import type { ShardFront, ShardPeers } from '../shard-context.js';
import { decodeStageBlocks, type StageSpec } from '../stage.js';
import {
  decodeBlock,
  decodeOptions,
  runChecks,
  type BlockSpec,
  type BlockValues,
  type Checks,
  type DecodedBlock,
  type FieldSpec,
  type NestedBlockSpec,
} from '../../lib/config/schema.js';

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
  /** Set on a shard thread of a sharded run (core/shards): this shard and its peers. */
  readonly shard?: ShardPeers;
  /** Set on the main thread of a sharded run: sources hand their bodies off to the shards. */
  readonly front?: ShardFront;
}

/**
 * What a component's `validate` knows of the component besides its block: its id (in a config
 * `logs.write.jetstream.buffer`, from code the id its RunOptions give), for defaults made from it
 * such as a connection name.
 */
export type ValidationContext = Pick<ComponentContext, 'id'>;

/**
 * The arguments a component receives: its typed values (what its `validate` made of the decoded
 * block, or the decoded values themselves) plus its original block.
 */
export interface ComponentArgs<A = Record<string, unknown>> {
  readonly values: A;
  readonly block: Block;
  readonly decoded: DecodedBlock;
  readonly scope: EvalScope;
  readonly path: readonly string[];
}

export interface Component<A = any> {
  /** Values other components can reference: `<name>.<label>.<export>`. */
  readonly exports: Readonly<Record<string, ConfigValue>>;
  health(): Health;
  /** Applies new arguments (config reload). Must throw ConfigError(s) to reject them. */
  update(args: ComponentArgs<A>): void;
  /** Starts background work (servers, readers). */
  start?(): Promise<void>;
  /** Stops accepting, flushes and drains. */
  stop(): Promise<void>;
}

/** What describes a component besides its code: its name, docs and schema. */
export interface ComponentSpec extends BlockSpec {
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
}

/** The decoded values of a component of this spec: its attributes and blocks, and its stages when it takes them. */
export type ComponentValues<S> = BlockValues<S> & (S extends { readonly stages: true } ? { readonly stages: StageSpec[] } : unknown);

export interface ComponentDefinition<V = any, A = V> extends ComponentSpec {
  /**
   * Checks that span fields (and work the schema cannot do, such as reading files) and turns the
   * decoded values into what the component runs on. Every problem goes through `checks`, so all of
   * them are reported at once, placed at their attributes.
   */
  readonly validate?: (values: V, checks: Checks, ctx: ValidationContext) => A;
  /**
   * Builds the component from decoded arguments (a registered definition validates them before
   * its own build sees them, as its instance's `update` does).
   */
  readonly build: (args: ComponentArgs<any>, ctx: ComponentContext) => Component<A>;
}

const components = new Map<string, ComponentDefinition>();

/**
 * Defines and registers a component. Its values are typed from its schema (`t.bytes` gives a
 * number, `t.capsule<LogsReceiver>(…)` the receiver, an absent optional field `undefined`), and
 * `build`/`update` get what `validate` returns, or the values themselves without one.
 */
export function defineComponent<
  const F extends Readonly<Record<string, FieldSpec>>,
  const B extends Readonly<Record<string, NestedBlockSpec>> = Record<never, NestedBlockSpec>,
  const Stages extends boolean = false,
  A = ComponentValues<{ fields: F; blocks: B; stages: Stages }>,
>(
  def: ComponentSpec & {
    readonly fields: F;
    readonly blocks?: B;
    readonly stages?: Stages;
    readonly validate?: (values: ComponentValues<{ fields: F; blocks: B; stages: Stages }>, checks: Checks, ctx: ValidationContext) => A;
    readonly build: (args: ComponentArgs<A>, ctx: ComponentContext) => Component<A>;
  },
): ComponentDefinition<ComponentValues<{ fields: F; blocks: B; stages: Stages }>, A> & { readonly fields: F; readonly blocks?: B } {
  const typed = def as unknown as ComponentDefinition;
  const registered: ComponentDefinition = {
    ...typed,
    // The runtime (and a program) hands decoded arguments; the component's own build and update
    // get them validated, so a rejected reload leaves the running component as it was.
    build(args, ctx) {
      const component = typed.build(validatedArgs(typed, args, ctx), ctx);
      const update = component.update.bind(component);
      component.update = (next) => update(validatedArgs(typed, next, ctx));
      return component;
    },
  };
  components.set(def.name, registered);
  return registered as ComponentDefinition<ComponentValues<{ fields: F; blocks: B; stages: Stages }>, A> & {
    readonly fields: F;
    readonly blocks?: B;
  };
}

export function componentDefinition(name: string): ComponentDefinition | undefined {
  return components.get(name);
}

export function componentDefinitions(): ComponentDefinition[] {
  return [...components.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Decodes a component's block against its schema (its stages included): the decoded arguments,
 * not yet validated, and the attribute values as written (before stages), for showing.
 */
export function decodeComponent(
  def: ComponentDefinition,
  block: Block,
  scope: EvalScope,
  path: readonly string[],
): { readonly decodedArgs: ComponentArgs; readonly written: Record<string, unknown> } {
  const decoded = decodeBlock(block, def, scope, path, { deferValueErrors: true });
  const written = { ...decoded.values };
  if (def.stages) decoded.values.stages = decodeStageBlocks(decoded.stageBlocks, scope);
  return { decodedArgs: { values: decoded.values, block, decoded, scope, path }, written };
}

/**
 * Runs a component's `validate` on decoded arguments: what its `build` or `update` gets. Throws
 * every problem found, those of the values' own checks (a bad byte size) included.
 */
export function validatedArgs<A>(def: ComponentDefinition<any, A>, decodedArgs: ComponentArgs, ctx: ValidationContext): ComponentArgs<A> {
  const validate = def.validate ?? ((values: unknown) => values as A);
  const { block, path, decoded } = decodedArgs;
  const values = runChecks(block, path, (checks) => validate(decodedArgs.values, checks, ctx), decoded?.valueErrors);
  return { ...decodedArgs, values };
}

/**
 * What options given in code are decoded and validated against: a component's definition, or a
 * schema and validation of its own for a face that takes fewer options (a source's, without the
 * `forward_to` its subscriber stands for).
 */
export type OptionsSpec<V, A> = BlockSpec & { readonly validate?: (values: V, checks: Checks, ctx: ValidationContext) => A };

/**
 * Options given in code for a component (its attributes and blocks, written as a config writes
 * them, without what only a config has), decoded and validated as a block is: what the component's
 * programmatic face runs on. Errors carry the texts a config gets, without positions. `ctx` names
 * the component (its standalone context); without it the id is the path's, as a program's default.
 */
export function componentOptions<V, A>(
  def: OptionsSpec<V, A>,
  options: object,
  path: readonly string[],
  ctx: ValidationContext = { id: path.join('.') },
): A {
  const valueErrors: ConfigError[] = [];
  const values = decodeOptions(def, options, path, valueErrors) as V;
  const validate = def.validate ?? ((given: V) => given as unknown as A);
  return runChecks(undefined, path, (checks) => validate(values, checks, ctx), valueErrors);
}
