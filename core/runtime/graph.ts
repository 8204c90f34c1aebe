import { didYouMean } from '../../lib/suggest.js';
import type { Block, Expr, Statement } from '../../lib/config/ast.js';
import { dottedPath, type ConfigValue, type EvalScope } from '../../lib/config/evaluate.js';
import { parseConfig } from '../../lib/config/parser.js';
import { ConfigError, ConfigErrors, configErrorsOf } from '../../lib/config/errors.js';
import { componentRegistry } from '../metrics.js';
import { blockTitle } from '../../lib/config/schema.js';
import { STAGE_IMPORT_BLOCK } from '../stage-modules.js';
import { durationsAsNanoseconds } from './arguments.js';
import {
  componentDefinition,
  componentDefinitions,
  decodeComponent,
  unhealthy,
  type Component,
  type ComponentArgs,
  type ComponentContext,
  type ComponentDefinition,
  type Health,
} from './component.js';
import {
  componentId,
  expandModules,
  longestPrefix,
  inInstance,
  moduleLabels,
  UNKNOWN_VALUE,
  unknownExport,
  type InstanceSite,
} from './modules.js';

interface Node {
  readonly id: string;
  readonly def: ComponentDefinition;
  block: Block;
  deps: Set<string>;
  component?: Component;
  /** Set when the component's last update was rejected. */
  failure?: Health;
  /** The arguments last decoded for it (without decoded stages), for the run server's page. */
  values?: Record<string, unknown>;
  /** The custom component instance it is part of, named in its errors. */
  site?: InstanceSite;
  /** Takes the series of its registry (see `componentContext`) off the exposition. */
  removeMetrics?: () => void;
}

/**
 * Sees every exported value (`owner`'s) as it is resolved in another component's (`referrer`'s)
 * arguments, and may stand another in for it: the run server's taps wrap receivers this way.
 */
export type ExportHook = (value: ConfigValue, owner: string, referrer: string) => ConfigValue;

/** Namespaces of the config standard library, never component references. */
const STDLIB_ROOTS = new Set([
  'sys',
  'env',
  'string',
  'encoding',
  'array',
  'json_decode',
  'coalesce',
  'concat',
  'convert',
  'file',
  'constants',
]);

/** The id of a component block (defined with the module expansion, which names blocks the same way). */
export { componentId };

/**
 * A config file's components, built in dependency order (references resolved, duplicate ids and
 * cycles rejected with positions), then run together. Reload rebuilds only what changed.
 */
export class ComponentGraph {
  private nodes = new Map<string, Node>();
  private order: string[] = [];

  constructor(
    private readonly context: (id: string) => ComponentContext,
    private readonly exportHook?: ExportHook,
    /**
     * The definition a component block is built with, given the registered one: a sharded run's
     * main thread builds stand-ins for the components its shards run (the same schema and checks).
     * Must give the same definition for the same one, so a reload sees an unchanged component.
     */
    private readonly definitionFor: (def: ComponentDefinition) => ComponentDefinition = (def) => def,
  ) {}

  /**
   * Loads a config for the first time; throws ConfigErrors with every problem found, in source
   * order. Graph errors (unknown references, duplicates) do not stop the components from being
   * decoded and built: an attribute that refers to a missing component is taken as unknown.
   */
  load(text: string, file: string): void {
    const errors: ConfigError[] = [];
    const plan = this.plan(text, file, errors);
    const missing = new Set(plan.missing);
    for (const id of plan.order) {
      const node = plan.nodes.get(id)!;
      const unknownValues = new Set<Expr>();
      try {
        const args = this.args(node, plan.nodes, (expr) => {
          const found = unresolvedIn(expr, missing, plan.nodes);
          if (found) unknownValues.add(expr);
          return found;
        });
        node.component = node.def.build(args, this.componentContext(node));
      } catch (err) {
        node.removeMetrics?.();
        // Built from stand-in values, a component may fail in ways that mean nothing to the user.
        if (unknownValues.size > 0 && !(err instanceof ConfigError || err instanceof ConfigErrors)) continue;
        errors.push(...withoutFollowOns(configErrorsOf(err), node.block, unknownValues).map((e) => inInstance(e, node.site)));
      }
    }
    if (errors.length > 0) {
      for (const id of plan.order) {
        const node = plan.nodes.get(id)!;
        void node.component?.stop();
        node.removeMetrics?.();
      }
      throw new ConfigErrors(inSourceOrder(errors, file));
    }
    this.nodes = plan.nodes;
    this.order = plan.order;
  }

  /**
   * Applies a new config to running components. A syntax or graph error keeps everything as it
   * was; a component whose new arguments are rejected keeps running its old configuration and is
   * reported unhealthy (the reference's behaviour for logs.process).
   */
  async reload(text: string, file: string): Promise<ConfigError[]> {
    let plan;
    try {
      plan = this.plan(text, file);
    } catch (err) {
      return configErrorsOf(err);
    }
    const errors: ConfigError[] = [];
    for (const [id, node] of this.nodes) {
      const next = plan.nodes.get(id);
      if (!next || next.def !== node.def) {
        await node.component?.stop();
        node.removeMetrics?.();
        this.nodes.delete(id);
      }
    }
    for (const id of plan.order) {
      const next = plan.nodes.get(id)!;
      const existing = this.nodes.get(id);
      try {
        if (existing?.component) {
          existing.block = next.block;
          existing.deps = next.deps;
          existing.component.update(this.args(existing, this.nodesView(plan.nodes)));
          existing.failure = undefined;
        } else {
          next.component = next.def.build(this.args(next, this.nodesView(plan.nodes)), this.componentContext(next));
          this.nodes.set(id, next);
          await next.component.start?.();
        }
      } catch (err) {
        if (!existing?.component && !next.component) next.removeMetrics?.();
        const found = configErrorsOf(err).map((e) => inInstance(e, next.site));
        errors.push(...found);
        if (existing) existing.failure = unhealthy(found.map((e) => e.message).join('\n'));
      }
    }
    this.order = plan.order.filter((id) => this.nodes.has(id));
    return errors;
  }

  async start(): Promise<void> {
    for (const id of this.order) await this.nodes.get(id)!.component?.start?.();
  }

  /**
   * Stops dependents before their dependencies (sources before processors before sinks), so what
   * an upstream component flushes on stop still reaches a live receiver.
   */
  async stop(): Promise<void> {
    for (const id of [...this.order].reverse()) await this.nodes.get(id)!.component?.stop();
  }

  health(): Array<{ id: string; name: string; health: Health }> {
    return this.order.map((id) => {
      const node = this.nodes.get(id)!;
      return { id, name: node.def.name, health: node.failure ?? node.component?.health() ?? unhealthy('not built') };
    });
  }

  /** The ids of the loaded components, dependencies before their dependents. */
  componentIds(): string[] {
    return [...this.order];
  }

  component(id: string): Component | undefined {
    return this.nodes.get(id)?.component;
  }

  /** The components it references and its last decoded arguments, as written (not redacted). */
  details(id: string): { references: string[]; values: Record<string, unknown> } | undefined {
    const node = this.nodes.get(id);
    return node && { references: [...node.deps].sort(), values: durationsAsNanoseconds(node.def, node.values ?? {}) };
  }

  /**
   * The context the graph was given for a component, with a registry of the component's own: every
   * series it registers is served labelled with its `component_id` and `component_path` (see
   * `componentRegistry`; inside a module instance, its id there and the instance's path, as
   * `moduleLabels` gives them), removed again when the component is.
   */
  private componentContext(node: Node): ComponentContext {
    const context = this.context(node.id);
    const metrics = componentRegistry(context.registry, moduleLabels(node.id, node.site));
    node.removeMetrics = metrics.remove;
    return { ...context, registry: metrics.registry };
  }

  private nodesView(planned: Map<string, Node>): Map<string, Node> {
    const view = new Map(planned);
    for (const [id, node] of this.nodes) if (view.has(id)) view.set(id, node);
    return view;
  }

  private args(node: Node, nodes: Map<string, Node>, unresolved?: (expr: Expr) => boolean): ComponentArgs {
    const scope = { ...graphScope(nodes, node.id, this.exportHook), unresolved };
    const path = [blockTitle(node.block)];
    const { decodedArgs, written } = decodeComponent(node.def, node.block, scope, path);
    node.values = written;
    return decodedArgs;
  }

  /**
   * Resolves a config's components and their references. Throws ConfigErrors on any problem;
   * with `collect`, adds the problems there instead (unless the file does not parse) and returns
   * what could be planned, with the positions of references to missing components.
   */
  private plan(text: string, file: string, collect?: ConfigError[]): { nodes: Map<string, Node>; order: string[]; missing: number[] } {
    const ast = parseConfig(text, file);
    const errors: ConfigError[] = [];
    const missing: number[] = [];
    const nodes = new Map<string, Node>();
    // Custom components and imports become plain components with prefixed ids (see modules.ts).
    for (const { stmt, id: placedId, site, declared } of expandModules(ast, errors)) {
      if (stmt.kind === 'attribute') {
        errors.push(new ConfigError(`unexpected attribute "${stmt.name}" at the top level; expected a component block`, stmt.pos));
        continue;
      }
      // Loaded by whoever loads the config, before the graph is planned (see stage-modules).
      if (stmt.name === STAGE_IMPORT_BLOCK) continue;
      const registered = componentDefinition(stmt.name);
      const def = registered && this.definitionFor(registered);
      if (!def) {
        const known = [...componentDefinitions().map((d) => d.name), ...(declared ?? [])];
        errors.push(
          inInstance(new ConfigError(`unrecognized component name "${stmt.name}"${didYouMean(stmt.name, known)}`, stmt.pos), site),
        );
        continue;
      }
      const id = placedId ?? componentId(stmt);
      const previous = nodes.get(id);
      if (previous) {
        const p = previous.block.pos;
        errors.push(inInstance(new ConfigError(`component "${id}" already declared at ${p.file}:${p.line}:${p.col}`, stmt.pos), site));
        continue;
      }
      nodes.set(id, { id, def, block: stmt, deps: new Set(), site });
    }
    const ids = [...nodes.keys()];
    for (const node of nodes.values()) {
      for (const ref of referencesIn(node.block.body)) {
        if (STDLIB_ROOTS.has(ref.path[0]!)) continue;
        if (ref.path[0] === UNKNOWN_VALUE) {
          missing.push(ref.pos.offset);
          continue;
        }
        const target = longestPrefix(ref.path, ids);
        if (target === undefined) {
          // Suggest a component written with the same export: `loki.write.x.receiver` → `logs.write.x.receiver`.
          missing.push(ref.pos.offset);
          const exported = ref.path.at(-1)!;
          const suggestion = didYouMean(
            ref.path.join('.'),
            ids.map((id) => `${id}.${exported}`),
          );
          errors.push(
            inInstance(
              new ConfigError(`component "${ref.path.join('.')}" does not exist or is out of scope${suggestion}`, ref.pos, [
                blockTitle(node.block),
              ]),
              node.site,
            ),
          );
        } else if (target === node.id) {
          errors.push(
            inInstance(new ConfigError(`component "${node.id}" references itself`, ref.pos, [blockTitle(node.block)]), node.site),
          );
        } else {
          const exported = ref.path[target.split('.').length];
          const exportNames = nodes.get(target)!.def.exportNames;
          if (exported !== undefined && !exportNames.includes(exported)) {
            // Reported here, with the exports it could have meant, rather than as the evaluator's bare
            // `field "x" does not exist`; the reference is then of unknown value, like a missing one,
            // and no dependency (that could only make a knock-on cycle).
            missing.push(ref.pos.offset);
            errors.push(
              inInstance(new ConfigError(unknownExport(target, exported, exportNames), ref.pos, [blockTitle(node.block)]), node.site),
            );
          } else {
            node.deps.add(target);
          }
        }
      }
    }
    if (!collect) {
      if (errors.length > 0) throw new ConfigErrors(errors);
      return { nodes, order: topologicalOrder(nodes), missing };
    }
    collect.push(...errors);
    let order: string[];
    try {
      order = topologicalOrder(nodes);
    } catch (err) {
      collect.push(...configErrorsOf(err));
      order = [...nodes.keys()];
    }
    return { nodes, order, missing };
  }
}

/**
 * Whether an expression refers to a missing component (one of the `missing` reference positions)
 * or to one that could not be built: its value is unknown, its errors already reported.
 */
function unresolvedIn(expr: Expr, missing: ReadonlySet<number>, nodes: ReadonlyMap<string, Node>): boolean {
  const ids = [...nodes.keys()];
  return referencesIn([{ kind: 'attribute', name: '', value: expr, pos: expr.pos }]).some((ref) => {
    if (missing.has(ref.pos.offset)) return true;
    const id = longestPrefix(ref.path, ids);
    return id !== undefined && !nodes.get(id)!.component;
  });
}

/**
 * A component's errors less those about attributes whose values were unknown (they refer to
 * something missing, reported at the reference): the decoder gave them stand-in values, and what
 * validation says about a stand-in (`invalid url ""`) would only hide the cause.
 */
function withoutFollowOns(errors: readonly ConfigError[], block: Block, unknownValues: ReadonlySet<Expr>): ConfigError[] {
  if (unknownValues.size === 0) return [...errors];
  const standIns = new Set<number>();
  const walk = (stmts: readonly Statement[]): void => {
    for (const stmt of stmts) {
      if (stmt.kind === 'block') walk(stmt.body);
      else if (unknownValues.has(stmt.value)) standIns.add(stmt.pos.offset).add(stmt.value.pos.offset);
    }
  };
  walk(block.body);
  return errors.filter((e) => e.pos === undefined || !standIns.has(e.pos.offset));
}

/** Errors sorted by where they are: the config file's first, then each imported file's (stable; errors without a position last). */
function inSourceOrder(errors: readonly ConfigError[], file: string): ConfigError[] {
  const files = [file, ...new Set(errors.flatMap((e) => (e.pos ? [e.pos.file] : [])))];
  const rank = (e: ConfigError) => (e.pos ? files.indexOf(e.pos.file) : files.length);
  const at = (e: ConfigError) => e.pos?.offset ?? Number.POSITIVE_INFINITY;
  return [...errors].sort((a, b) => rank(a) - rank(b) || at(a) - at(b));
}

/** Scope that resolves `<component id>.<export>[.<field>…]` to the built component's exports. */
function graphScope(nodes: Map<string, Node>, referrer: string, hook?: ExportHook): EvalScope {
  const ids = [...nodes.keys()];
  return {
    env: (name) => process.env[name],
    resolve(path) {
      const id = longestPrefix(path, ids);
      if (id === undefined) return undefined;
      const component = nodes.get(id)!.component;
      if (!component) return undefined;
      let value: ConfigValue | undefined = component.exports as unknown as ConfigValue;
      for (const part of path.slice(id.split('.').length)) {
        if (value === null || typeof value !== 'object' || Array.isArray(value) || !(part in (value as object))) return undefined;
        value = (value as Record<string, ConfigValue>)[part];
      }
      return hook && value !== undefined ? hook(value, id, referrer) : value;
    },
  };
}

interface Reference {
  readonly path: string[];
  readonly pos: Expr['pos'];
}

/** Every dotted reference (`a.b.c`) written in a block body, nested blocks included. */
export function referencesIn(body: readonly Statement[]): Reference[] {
  const refs: Reference[] = [];
  const visit = (expr: Expr): void => {
    const path = dottedPath(expr);
    if (path) {
      refs.push({ path, pos: expr.pos });
      return;
    }
    switch (expr.kind) {
      case 'array':
        expr.items.forEach(visit);
        break;
      case 'object':
        expr.fields.forEach((f) => visit(f.value));
        break;
      case 'access':
        visit(expr.object);
        break;
      case 'index':
        visit(expr.object);
        visit(expr.index);
        break;
      case 'call':
        // The callee of a call is a stdlib function, not a reference.
        expr.args.forEach(visit);
        break;
      case 'unary':
        visit(expr.operand);
        break;
      case 'binary':
        visit(expr.left);
        visit(expr.right);
        break;
      case 'paren':
        visit(expr.inner);
        break;
      default:
        break;
    }
  };
  const walk = (stmts: readonly Statement[]): void => {
    for (const stmt of stmts) {
      if (stmt.kind === 'attribute') visit(stmt.value);
      else walk(stmt.body);
    }
  };
  walk(body);
  return refs;
}

function topologicalOrder(nodes: Map<string, Node>): string[] {
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (id: string, trail: string[]): void => {
    const s = state.get(id);
    if (s === 'done') return;
    if (s === 'visiting') {
      const cycle = [...trail.slice(trail.indexOf(id)), id];
      throw new ConfigErrors([new ConfigError(`cycle detected: ${cycle.join(' -> ')}`, nodes.get(id)!.block.pos)]);
    }
    state.set(id, 'visiting');
    for (const dep of [...nodes.get(id)!.deps].sort()) visit(dep, [...trail, id]);
    state.set(id, 'done');
    order.push(id);
  };
  for (const id of nodes.keys()) visit(id, []);
  return order;
}
