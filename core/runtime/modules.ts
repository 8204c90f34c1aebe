/**
 * Custom components and modules, the reference's `declare`, `argument`, `export`, `import.file` and
 * `import.string` blocks, expanded before the component graph is planned.
 *
 * An instance (`pipeline "default" { labels = { env = "prod" } }`) is replaced by the components of
 * its declaration, each with an id under the instance's (`pipeline.default/logs.process.main`) so
 * metrics, logs and the run server tell two instances apart. `argument.NAME.value` inside the body
 * becomes the expression the instance gave (or the default), and a reference to an instance's
 * export (`pipeline.default.receiver`) becomes the export's expression, rewritten into the
 * instance. The graph then sees ordinary components and ordinary references: dependencies, build
 * order, reloads (a changed argument is a changed attribute) and error collection work as for a
 * config written out by hand, which is what expansion makes of it.
 *
 * Scoping follows the reference: a declaration's body sees its own arguments, components, nested
 * declarations and imports, and the declarations around it, but no component outside it; an
 * imported file holds only `declare` and `import` blocks, and its declarations are named under the
 * import's label (`import.file "mod"` → `mod.pipeline "default" { … }`).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { didYouMean } from '../../lib/suggest.js';
import type { Block, ConfigFile, Expr, Statement } from '../../lib/config/ast.js';
import { dottedPath, evaluate } from '../../lib/config/evaluate.js';
import { parseConfig } from '../../lib/config/parser.js';
import { ConfigError, configErrorsOf, type Position } from '../../lib/config/errors.js';
import { isStdlibName } from '../../lib/config/stdlib.js';
import { blockTitle } from '../../lib/config/schema.js';
import { componentDefinition } from './component.js';

const DECLARE = 'declare';
const ARGUMENT = 'argument';
const EXPORT = 'export';
const IMPORT_FILE = 'import.file';
const IMPORT_STRING = 'import.string';
/** Imports the reference has that fetch modules over the network; refused, one line each. */
const REMOTE_IMPORTS = new Set(['import.git', 'import.http']);

/**
 * The name of the reference that stands in for a value that could not be had (an undeclared
 * argument, an unknown export, an instance with bad arguments): the graph takes it as missing and
 * already reported, so the attribute holding it raises no knock-on errors.
 */
export const UNKNOWN_VALUE = '<unknown>';

/** Where an instance was written, and the instance around it when it is itself inside one. */
export interface InstanceSite {
  /** The instance's full id (`pipeline.default`, `outer.a/inner.b`). */
  readonly id: string;
  readonly pos: Position;
  readonly outer?: InstanceSite;
}

/** A component block to build, with its id (prefixed inside instances) and the instance holding it. */
export interface PlacedStatement {
  readonly stmt: Statement;
  /** The component's id; undefined for statements the graph reports itself (top-level attributes). */
  readonly id?: string;
  readonly site?: InstanceSite;
  /**
   * The custom components it could have meant, for a block that names no built-in component (the
   * graph's `unrecognized component name` suggests from both).
   */
  readonly declared?: readonly string[];
}

/**
 * The same error, its message ending with the instance it came from and where that instance was
 * written (`(in instance "pipeline.default" at main.alloy:12:1)`): a module's file:line:col says
 * where the problem is, the instance which arguments led to it. Unchanged outside instances.
 */
export function inInstance(error: ConfigError, site: InstanceSite | undefined): ConfigError {
  if (!site) return error;
  const where: string[] = [];
  for (let s: InstanceSite | undefined = site; s; s = s.outer) where.push(`"${s.id}" at ${s.pos.file}:${s.pos.line}:${s.pos.col}`);
  return new ConfigError(`${error.reason} (in instance ${where.join(', in instance ')})`, error.pos, error.blockPath);
}

/**
 * The reference's labels for a component's own series: its id within the module it runs in and
 * that module's path, `/` for the config itself and `/pipeline.default` (`/outer.o/inner.x` when
 * nested) inside an instance: `pipeline.default/logs.process.main` → `logs.process.main` at
 * `/pipeline.default`.
 */
export function moduleLabels(id: string, site: InstanceSite | undefined): { component_id: string; component_path: string } {
  if (!site) return { component_id: id, component_path: '/' };
  return { component_id: id.slice(site.id.length + 1), component_path: `/${site.id}` };
}

/**
 * Expands a parsed config's declarations, imports and instances into the statements the graph
 * plans, in source order. Problems are added to `errors`; what is wrong is left out (an instance
 * with bad arguments adds no components; a reference to its exports is of unknown value, as a
 * reference to a missing component is).
 */
export function expandModules(ast: ConfigFile, errors: ConfigError[]): PlacedStatement[] {
  const out: PlacedStatement[] = [];
  const scope = collectScope(ast.body, undefined, ast.file, errors, [ast.file], false);
  expandBody(ast.body, { prefix: '', scope, locals: new Set(), instances: new Map(), out, errors }, true);
  return out;
}

interface Argument {
  readonly name: string;
  readonly optional: boolean;
  readonly default?: Expr;
  readonly pos: Position;
}

interface Declaration {
  readonly name: string;
  readonly block: Block;
  /** What its body sees: its own declarations and imports, then those around it. */
  readonly scope: Scope;
  readonly args: Map<string, Argument>;
  readonly exports: Map<string, Expr>;
}

class Scope {
  readonly declarations = new Map<string, Declaration>();
  constructor(readonly parent?: Scope) {}

  lookup(name: string): Declaration | undefined {
    return this.declarations.get(name) ?? this.parent?.lookup(name);
  }

  names(): string[] {
    return [...this.declarations.keys(), ...(this.parent?.names() ?? [])];
  }
}

interface Instance {
  readonly block: Block;
  readonly declaration: Declaration;
  state: 'pending' | 'expanding' | 'done';
  /** Its exports as expressions in the scope around it; UNKNOWN_VALUE stand-ins when it could not be expanded. */
  exports?: Map<string, Expr>;
}

interface Context {
  /** Prepended to the ids of the components in this body: '' at the top, `pipeline.default/` inside. */
  readonly prefix: string;
  readonly scope: Scope;
  /** The instance's arguments (expressions in the scope around it), inside a declaration. */
  readonly args?: Map<string, Expr>;
  readonly declaration?: Declaration;
  readonly site?: InstanceSite;
  /** Ids of the components written in this body. */
  readonly locals: Set<string>;
  /** Instances written in this body, by id. */
  readonly instances: Map<string, Instance>;
  readonly out: PlacedStatement[];
  readonly errors: ConfigError[];
}

/** The id of a component block: its dotted name plus its label (`logs.process.default`). */
export function componentId(block: Block): string {
  return block.label === undefined ? block.name : `${block.name}.${block.label}`;
}

function isModuleBlock(name: string): boolean {
  return name === DECLARE || name === IMPORT_FILE || name === IMPORT_STRING || REMOTE_IMPORTS.has(name);
}

/**
 * The declarations and imports of a body (the config's, a declaration's or an imported file's),
 * seen from inside it before those of `parent`. An imported file (`moduleFile`) may hold nothing
 * else; `importing` is the chain of files being imported, to refuse a cycle.
 */
function collectScope(
  body: readonly Statement[],
  parent: Scope | undefined,
  file: string,
  errors: ConfigError[],
  importing: readonly string[],
  moduleFile: boolean,
): Scope {
  const scope = new Scope(parent);
  const add = (name: string, declaration: Declaration, pos: Position): void => {
    const previous = scope.declarations.get(name);
    if (previous) {
      const p = previous.block.pos;
      errors.push(new ConfigError(`custom component "${name}" already declared at ${p.file}:${p.line}:${p.col}`, pos));
      return;
    }
    scope.declarations.set(name, declaration);
  };
  for (const stmt of body) {
    if (moduleFile && (stmt.kind === 'attribute' || !isModuleBlock(stmt.name))) {
      const what = stmt.kind === 'attribute' ? `attribute "${stmt.name}"` : `block "${stmt.name}"`;
      errors.push(new ConfigError(`unexpected ${what} in an imported module; it may hold only declare and import blocks`, stmt.pos));
      continue;
    }
    if (stmt.kind !== 'block') continue;
    if (REMOTE_IMPORTS.has(stmt.name)) {
      errors.push(new ConfigError(`${stmt.name} is not supported: copy the module next to the config and use import.file`, stmt.pos));
    } else if (stmt.name === DECLARE) {
      if (!stmt.label) {
        errors.push(new ConfigError('declare block needs a label: the name of the custom component', stmt.pos));
        continue;
      }
      if (componentDefinition(stmt.label)) {
        errors.push(new ConfigError(`cannot declare "${stmt.label}": a built-in component has that name`, stmt.pos));
        continue;
      }
      add(stmt.label, declaration(stmt, scope, file, errors, importing), stmt.pos);
    } else if (stmt.name === IMPORT_FILE || stmt.name === IMPORT_STRING) {
      if (!stmt.label) {
        errors.push(new ConfigError(`${stmt.name} block needs a label: the namespace of what it imports`, stmt.pos));
        continue;
      }
      for (const [name, declared] of importModule(stmt, file, errors, importing)) add(`${stmt.label}.${name}`, declared, stmt.pos);
    }
  }
  return scope;
}

/**
 * A `declare` block read once, however often it is instantiated: its arguments, its exports'
 * expressions (as written, rewritten per instance) and what its body sees.
 */
function declaration(block: Block, around: Scope, file: string, errors: ConfigError[], importing: readonly string[]): Declaration {
  const args = new Map<string, Argument>();
  const exports = new Map<string, Expr>();
  const written = new Map<string, Position>();
  const path = [blockTitle(block)];
  for (const stmt of block.body) {
    if (stmt.kind === 'attribute') {
      errors.push(new ConfigError(`unexpected attribute "${stmt.name}" in a declare block; arguments are argument blocks`, stmt.pos, path));
      continue;
    }
    if (stmt.name !== ARGUMENT && stmt.name !== EXPORT) continue;
    if (stmt.label === undefined) {
      errors.push(new ConfigError(`${stmt.name} block needs a label: its name`, stmt.pos, path));
      continue;
    }
    const key = `${stmt.name} ${stmt.label}`;
    const p = written.get(key);
    if (p) {
      errors.push(new ConfigError(`${blockTitle(stmt)} already declared at ${p.file}:${p.line}:${p.col}`, stmt.pos, path));
      continue;
    }
    written.set(key, stmt.pos);
    const where = [...path, blockTitle(stmt)];
    const attrs = attributesOf(stmt, stmt.name === ARGUMENT ? ['optional', 'default', 'comment'] : ['value'], errors, where);
    if (stmt.name === EXPORT) {
      const value = attrs.get('value');
      if (value) exports.set(stmt.label, value);
      else errors.push(new ConfigError('missing required attribute "value"', stmt.pos, where));
      continue;
    }
    /** A literal attribute's value when it has the type wanted; undefined (reported) otherwise. */
    const literal = <T>(name: string, type: 'boolean' | 'string'): T | undefined => {
      const expr = attrs.get(name);
      if (!expr) return undefined;
      const value = constant(expr, errors, where);
      if (value === undefined || typeof value === type) return value as T | undefined;
      errors.push(new ConfigError(`attribute "${name}": expected ${type === 'boolean' ? 'bool' : 'string'}`, expr.pos, where));
      return undefined;
    };
    const optional = literal<boolean>('optional', 'boolean') ?? false;
    // Only checked: the comment documents the argument for readers of the config.
    literal<string>('comment', 'string');
    args.set(stmt.label, { name: stmt.label, optional, default: attrs.get('default'), pos: stmt.pos });
  }
  return { name: block.label!, block, scope: collectScope(block.body, around, file, errors, importing, false), args, exports };
}

/** The attributes of an `argument`, `export` or `import.*` block; unknown ones and nested blocks are errors. */
function attributesOf(block: Block, allowed: readonly string[], errors: ConfigError[], path: readonly string[]): Map<string, Expr> {
  const attrs = new Map<string, Expr>();
  for (const stmt of block.body) {
    if (stmt.kind === 'block') {
      errors.push(new ConfigError(`unexpected block "${stmt.name}"`, stmt.pos, path));
    } else if (!allowed.includes(stmt.name)) {
      errors.push(new ConfigError(`unrecognized attribute name "${stmt.name}"${didYouMean(stmt.name, allowed)}`, stmt.pos, path));
    } else if (attrs.has(stmt.name)) {
      errors.push(new ConfigError(`attribute "${stmt.name}" may only be provided once`, stmt.pos, path));
    } else {
      attrs.set(stmt.name, stmt.value);
    }
  }
  return attrs;
}

/** A value that needs no component (`true`, `sys.env("DIR") + "/mods"`), or undefined after reporting why not. */
function constant(expr: Expr, errors: ConfigError[], path: readonly string[]): unknown {
  try {
    return evaluate(expr, { resolve: () => undefined });
  } catch (err) {
    errors.push(...configErrorsOf(err).map((e) => e.within(path, expr.pos)));
    return undefined;
  }
}

/** The declarations of an `import.file` (a file, or every `.alloy` file of a directory) or `import.string`. */
function importModule(block: Block, file: string, errors: ConfigError[], importing: readonly string[]): Map<string, Declaration> {
  const declared = new Map<string, Declaration>();
  const path = [blockTitle(block)];
  const isFile = block.name === IMPORT_FILE;
  // detector and poll_frequency are the reference's; files are read again on every reload instead.
  const key = isFile ? 'filename' : 'content';
  const attrs = attributesOf(block, isFile ? ['filename', 'detector', 'poll_frequency'] : ['content'], errors, path);
  const expr = attrs.get(key);
  if (!expr) {
    errors.push(new ConfigError(`missing required attribute "${key}"`, block.pos, path));
    return declared;
  }
  const value = constant(expr, errors, path);
  if (value === undefined) return declared;
  if (typeof value !== 'string') {
    errors.push(new ConfigError(`attribute "${key}": expected string`, expr.pos, path));
    return declared;
  }
  const sources: Array<{ text: string; file: string }> = [];
  if (isFile) {
    const target = isAbsolute(value) ? value : join(dirname(file), value);
    try {
      const files = statSync(target).isDirectory()
        ? readdirSync(target)
            .filter((name) => name.endsWith('.alloy'))
            .sort()
            .map((name) => join(target, name))
        : [target];
      for (const f of files) sources.push({ text: readFileSync(f, 'utf8'), file: f });
    } catch (err) {
      errors.push(
        new ConfigError(
          `cannot read module ${JSON.stringify(value)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
          expr.pos,
          path,
        ),
      );
      return declared;
    }
  } else {
    sources.push({ text: value, file: `${IMPORT_STRING}.${block.label}` });
  }
  for (const source of sources) {
    if (importing.includes(source.file)) {
      errors.push(new ConfigError(`import cycle: ${[...importing, source.file].join(' -> ')}`, block.pos, path));
      continue;
    }
    let ast: ConfigFile;
    try {
      ast = parseConfig(source.text, source.file);
    } catch (err) {
      errors.push(...configErrorsOf(err));
      continue;
    }
    const scope = collectScope(ast.body, undefined, source.file, errors, [...importing, source.file], true);
    for (const [name, d] of scope.declarations) {
      // Only the file's own declarations; what it imports stays its own.
      if (d.block.pos.file === source.file && !name.includes('.')) declared.set(name, d);
    }
  }
  return declared;
}

/** Places a body's components and expands its instances, in source order. */
function expandBody(body: readonly Statement[], ctx: Context, topLevel: boolean): void {
  for (const stmt of body) {
    if (stmt.kind !== 'block' || isModuleBlock(stmt.name) || stmt.name === ARGUMENT || stmt.name === EXPORT) continue;
    const id = componentId(stmt);
    const declared = ctx.scope.lookup(stmt.name);
    if (!declared) {
      ctx.locals.add(id);
      continue;
    }
    const previous = ctx.instances.get(id);
    if (previous) {
      const p = previous.block.pos;
      ctx.errors.push(
        inInstance(new ConfigError(`component "${ctx.prefix}${id}" already declared at ${p.file}:${p.line}:${p.col}`, stmt.pos), ctx.site),
      );
      continue;
    }
    if (stmt.label === undefined) {
      ctx.errors.push(inInstance(new ConfigError(`custom component "${stmt.name}" needs a label`, stmt.pos), ctx.site));
      continue;
    }
    ctx.instances.set(id, { block: stmt, declaration: declared, state: 'pending' });
  }
  for (const stmt of body) {
    if (stmt.kind === 'attribute') {
      if (topLevel) ctx.out.push({ stmt });
      continue;
    }
    if (isModuleBlock(stmt.name)) continue;
    if (stmt.name === ARGUMENT || stmt.name === EXPORT) {
      if (topLevel) ctx.errors.push(new ConfigError(`${stmt.name} blocks belong inside a declare block`, stmt.pos));
      continue;
    }
    const instance = ctx.instances.get(componentId(stmt));
    if (instance?.block === stmt) {
      exportsOf(instance, ctx);
    } else if (!instance) {
      const declared = componentDefinition(stmt.name) ? undefined : ctx.scope.names();
      ctx.out.push({ stmt: rewriteBlock(stmt, ctx), id: ctx.prefix + componentId(stmt), site: ctx.site, declared });
    }
  }
}

/** Expands an instance (once) and gives its exports as expressions in the scope around it. */
function exportsOf(instance: Instance, ctx: Context): Map<string, Expr> {
  if (instance.state === 'done') return instance.exports!;
  const id = ctx.prefix + componentId(instance.block);
  const standIns = (): Map<string, Expr> =>
    new Map(
      [...instance.declaration.exports.keys()].map((name) => [
        name,
        { kind: 'ident', name: UNKNOWN_VALUE, pos: instance.block.pos } as Expr,
      ]),
    );
  if (instance.state === 'expanding') {
    ctx.errors.push(inInstance(new ConfigError(`custom component "${id}" depends on its own exports`, instance.block.pos), ctx.site));
    return standIns();
  }
  instance.state = 'expanding';
  const declaration = instance.declaration;
  const path = [blockTitle(instance.block)];
  const given = new Map<string, Expr>();
  let ok = true;
  const fail = (error: ConfigError): void => {
    ok = false;
    ctx.errors.push(inInstance(error, ctx.site));
  };
  for (const stmt of instance.block.body) {
    if (stmt.kind === 'block') {
      fail(new ConfigError(`unexpected block "${stmt.name}": a custom component takes arguments as attributes`, stmt.pos, path));
    } else if (!declaration.args.has(stmt.name)) {
      const known = [...declaration.args.keys()];
      fail(
        new ConfigError(
          `unrecognized argument "${stmt.name}" of custom component "${declaration.name}"${didYouMean(stmt.name, known)}`,
          stmt.pos,
          path,
        ),
      );
    } else if (given.has(stmt.name)) {
      fail(new ConfigError(`attribute "${stmt.name}" may only be provided once`, stmt.pos, path));
    } else {
      given.set(stmt.name, rewriteExpr(stmt.value, ctx));
    }
  }
  const args = new Map<string, Expr>();
  for (const arg of declaration.args.values()) {
    // As in the reference, a default applies only to an optional argument: a required one must be given.
    const value = given.get(arg.name) ?? (arg.optional ? (arg.default ?? { kind: 'null', pos: instance.block.pos }) : undefined);
    if (value) args.set(arg.name, value);
    else
      fail(new ConfigError(`missing required argument "${arg.name}" of custom component "${declaration.name}"`, instance.block.pos, path));
  }
  if (!ok) {
    instance.state = 'done';
    instance.exports = standIns();
    return instance.exports;
  }
  const inner: Context = {
    prefix: `${id}/`,
    scope: declaration.scope,
    args,
    declaration,
    site: { id, pos: instance.block.pos, outer: ctx.site },
    locals: new Set(),
    instances: new Map(),
    out: ctx.out,
    errors: ctx.errors,
  };
  expandBody(declaration.block.body, inner, false);
  instance.exports = new Map([...declaration.exports].map(([name, expr]) => [name, rewriteExpr(expr, inner)]));
  instance.state = 'done';
  return instance.exports;
}

/** The block with every reference in it rewritten into the context; the same object when none changes. */
function rewriteBlock(block: Block, ctx: Context): Block {
  const body = rewriteStatements(block.body, ctx);
  return body === block.body ? block : { ...block, body };
}

function rewriteStatements(body: readonly Statement[], ctx: Context): readonly Statement[] {
  let changed = false;
  const next = body.map((stmt): Statement => {
    const rewritten = stmt.kind === 'block' ? rewriteBlock(stmt, ctx) : rewriteAttribute(stmt, ctx);
    if (rewritten !== stmt) changed = true;
    return rewritten;
  });
  return changed ? next : body;
}

function rewriteAttribute(stmt: Extract<Statement, { kind: 'attribute' }>, ctx: Context): Statement {
  const value = rewriteExpr(stmt.value, ctx);
  return value === stmt.value ? stmt : { ...stmt, value };
}

/** The expression with its references rewritten into the context; the same object when none changes. */
function rewriteExpr(expr: Expr, ctx: Context): Expr {
  const path = dottedPath(expr);
  if (path) return rewriteReference(expr, path, ctx);
  const each = (items: readonly Expr[]): readonly Expr[] => {
    const next = items.map((item) => rewriteExpr(item, ctx));
    return next.some((item, i) => item !== items[i]) ? next : items;
  };
  switch (expr.kind) {
    case 'array': {
      const items = each(expr.items);
      return items === expr.items ? expr : { ...expr, items };
    }
    case 'object': {
      const values = each(expr.fields.map((f) => f.value));
      if (values.every((v, i) => v === expr.fields[i]!.value)) return expr;
      return { ...expr, fields: expr.fields.map((f, i) => ({ ...f, value: values[i]! })) };
    }
    case 'access': {
      const object = rewriteExpr(expr.object, ctx);
      return object === expr.object ? expr : { ...expr, object };
    }
    case 'index': {
      const object = rewriteExpr(expr.object, ctx);
      const index = rewriteExpr(expr.index, ctx);
      return object === expr.object && index === expr.index ? expr : { ...expr, object, index };
    }
    case 'call': {
      // The callee is a standard-library function, never a reference.
      const args = each(expr.args);
      return args === expr.args ? expr : { ...expr, args };
    }
    case 'unary': {
      const operand = rewriteExpr(expr.operand, ctx);
      return operand === expr.operand ? expr : { ...expr, operand };
    }
    case 'binary': {
      const left = rewriteExpr(expr.left, ctx);
      const right = rewriteExpr(expr.right, ctx);
      return left === expr.left && right === expr.right ? expr : { ...expr, left, right };
    }
    case 'paren': {
      const inner = rewriteExpr(expr.inner, ctx);
      return inner === expr.inner ? expr : { ...expr, inner };
    }
    default:
      return expr;
  }
}

/** The longest of `ids` that the dotted `path` starts with (`logs.echo.out` of `logs.echo.out.receiver`). */
export function longestPrefix(path: readonly string[], ids: Iterable<string>): string | undefined {
  const known = new Set(ids);
  for (let n = path.length; n > 0; n--) {
    const candidate = path.slice(0, n).join('.');
    if (known.has(candidate)) return candidate;
  }
  return undefined;
}

/**
 * `argument.x.value…` → the instance's expression for x; `inst.label.export…` → the export's
 * expression; a local component → its prefixed id. Inside a declaration anything else is also
 * prefixed, so it cannot reach a component outside and is reported missing in the instance's
 * terms; the standard library is left alone.
 */
function rewriteReference(expr: Expr, path: readonly string[], ctx: Context): Expr {
  const unknown = (): Expr => ({ kind: 'ident', name: UNKNOWN_VALUE, pos: expr.pos });
  const where = (error: ConfigError): void => void ctx.errors.push(inInstance(error, ctx.site));
  if (ctx.args && path[0] === ARGUMENT) {
    const name = path[1];
    const declared = [...ctx.declaration!.args.keys()];
    if (name === undefined || !ctx.declaration!.args.has(name)) {
      where(
        new ConfigError(
          `argument "${name ?? ''}" is not declared in custom component "${ctx.declaration!.name}"${didYouMean(name ?? '', declared)}`,
          expr.pos,
        ),
      );
      return unknown();
    }
    if (path[2] !== 'value') {
      where(new ConfigError(`an argument is read as argument.${name}.value`, expr.pos));
      return unknown();
    }
    return withFields(ctx.args.get(name)!, path.slice(3), expr.pos);
  }
  const instanceId = longestPrefix(path, ctx.instances.keys());
  if (instanceId !== undefined) {
    const instance = ctx.instances.get(instanceId)!;
    const exportName = path[instanceId.split('.').length];
    const names = [...instance.declaration.exports.keys()];
    if (exportName === undefined || !instance.declaration.exports.has(exportName)) {
      where(new ConfigError(unknownExport(ctx.prefix + instanceId, exportName ?? '', names), expr.pos));
      return unknown();
    }
    return withFields(exportsOf(instance, ctx).get(exportName)!, path.slice(instanceId.split('.').length + 1), expr.pos);
  }
  if (ctx.prefix === '') return expr;
  if (longestPrefix(path, ctx.locals) === undefined && isStdlibName(path[0]!)) return expr;
  return withFields(undefined, [...`${ctx.prefix}${path[0]}`.split('.'), ...path.slice(1)], expr.pos);
}

/**
 * `component "pipeline.default" has no export "reciever" (did you mean "receiver"?)`, for
 * built-in and custom components alike.
 */
export function unknownExport(id: string, exported: string, exportNames: readonly string[]): string {
  const known =
    didYouMean(exported, exportNames) ||
    (exportNames.length === 0 ? '; it exports nothing' : `; it exports ${exportNames.map((n) => JSON.stringify(n)).join(', ')}`);
  return `component ${JSON.stringify(id)} has no export ${JSON.stringify(exported)}${known}`;
}

/** `base.f1.f2` as access nodes (or a reference `f1.f2…` without a base), positioned at `pos`. */
function withFields(base: Expr | undefined, fields: readonly string[], pos: Position): Expr {
  let expr = base;
  for (const name of fields) expr = expr === undefined ? { kind: 'ident', name, pos } : { kind: 'access', object: expr, name, pos };
  return expr!;
}
