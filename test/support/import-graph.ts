/**
 * The project's import graph and the house rules it must keep: which layer may import which, and
 * no import cycles. Read with TypeScript's own pre-processor, so every static import, re-export
 * and string-literal dynamic import counts, type-only ones included (a type cycle is still a
 * cycle for the reader). The package's own name counts too (`'rivulet'` is index.ts), and so does
 * a module started as a thread: `new URL('./worker.js', import.meta.url)` names a file the code
 * depends on as surely as an import does.
 */
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * The rooms of core/: the kernel at its top level (and in runtime/), the thread and inspection
 * rooms built on it, the components (logs.process and its engine) above them, and the sharded
 * run (core/shards), whose threads build the components, above all of them.
 */
const CORE_ROOMS = ['core', 'core/threads', 'core/inspect', 'core/components', 'core/shards'];

/** Every layer a product module may be in: what the tools beside the product may import. */
const PRODUCT = ['cli', 'playground', 'face', 'testing', ...CORE_ROOMS, 'lib', 'operators', 'receivers', 'sinks'];

/** Each layer and the layers it may import (itself included where listed). */
export const LAYER_RULES: Readonly<Record<string, readonly string[]>> = {
  lib: ['lib'],
  // The kernel: entries, clock, stages, pipeline, receivers, delivery, metrics, the component runtime.
  core: ['core', 'lib'],
  'core/threads': ['core/threads', 'core', 'lib'],
  'core/inspect': ['core/inspect', 'core', 'lib'],
  'core/components': ['core/components', 'core/threads', 'core', 'lib'],
  'core/shards': ['core/shards', 'core/components', 'core/threads', 'core/inspect', 'core', 'lib'],
  // Stages, sources and sinks build on the kernel's contracts, not on its rooms.
  operators: ['operators', 'core', 'lib'],
  receivers: ['receivers', 'core', 'lib'],
  sinks: ['sinks', 'core', 'lib'],
  // index.ts: the library face, every built-in but no command.
  face: [...CORE_ROOMS, 'lib', 'operators', 'receivers', 'sinks'],
  testing: ['testing', 'core', 'lib'],
  playground: ['playground', 'face', ...CORE_ROOMS, 'lib', 'operators', 'receivers', 'sinks'],
  cli: ['cli', 'playground', 'face', ...CORE_ROOMS, 'lib', 'operators', 'receivers', 'sinks', 'testing'],
  bin: ['cli'],
  // Tools beside the product: they may use any of it (a bench drives the CLI's run server), and
  // nothing imports them. bin/ is a program, not a module to import.
  bench: ['bench', ...PRODUCT],
  scripts: ['scripts', ...PRODUCT],
};

/** The folders (and the face file) whose sources the rules cover. */
const SOURCE_ROOTS = [
  'lib',
  'core',
  'operators',
  'receivers',
  'sinks',
  'testing',
  'playground',
  'cli',
  'bin',
  'index.ts',
  'bench',
  'scripts',
];

/** The package's own entry points (package.json `exports`), as a module of the tree imports them. */
const SELF_IMPORTS: Readonly<Record<string, string>> = { rivulet: 'index.ts', 'rivulet/testing': 'testing/index.ts' };

export function layerOf(file: string): string | undefined {
  if (file === 'index.ts') return 'face';
  const [top, room, ...rest] = file.split('/');
  if (top === 'core' && rest.length > 0 && CORE_ROOMS.includes(`core/${room}`)) return `core/${room}`;
  return top! in LAYER_RULES ? top : undefined;
}

/** Source file (relative, `/`-separated) → the project files it imports. */
export function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(root)) {
    const text = readFileSync(join(root, file), 'utf8');
    const targets: string[] = [];
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      const self = SELF_IMPORTS[ref.fileName];
      if (self !== undefined && existsSync(join(root, self))) targets.push(self);
      if (!ref.fileName.startsWith('.')) continue;
      const target = resolveImport(root, file, ref.fileName);
      if (target) targets.push(target);
    }
    for (const url of moduleUrls(file, text)) {
      const target = resolveImport(root, file, url);
      if (target) targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Every import that breaks a layer rule, as `from -> to (layer a may not import layer b)`. */
export function layerViolations(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const fromLayer = layerOf(from);
    if (!fromLayer) continue;
    for (const to of targets) {
      const toLayer = layerOf(to);
      if (!toLayer || LAYER_RULES[fromLayer]!.includes(toLayer)) continue;
      out.push(`${from} -> ${to} (${fromLayer} may not import ${toLayer})`);
    }
  }
  return out.sort();
}

/** Every import cycle (strongly connected component of more than one file, or a self-import), each sorted. */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm, iterative so a deep graph cannot overflow the stack.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; next: number }> = [{ node: start, next: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = graph.get(frame.node) ?? [];
      if (frame.next < targets.length) {
        const to = targets[frame.next++]!;
        if (!graph.has(to)) continue;
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, next: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      const selfImport = component.length === 1 && targets.includes(frame.node);
      if (component.length > 1 || selfImport) cycles.push(component.sort());
    }
  }
  return cycles;
}

function sourceFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(root, dir))) {
      const path = dir === '' ? name : `${dir}/${name}`;
      if (name === 'node_modules') continue;
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (/\.(ts|mts|mjs|js)$/.test(name) && !name.endsWith('.d.ts')) files.push(path);
    }
  };
  for (const top of SOURCE_ROOTS) {
    if (!existsSync(join(root, top))) continue;
    if (statSync(join(root, top)).isDirectory()) walk(top);
    else files.push(top);
  }
  return files;
}

/**
 * The modules a file names as `new URL('./x.js', import.meta.url)`: worker threads it starts (or
 * the source shims that start them). Only literals naming a module file count; a folder URL
 * (`new URL('..', import.meta.url)`) is a place, not a dependency.
 */
function moduleUrls(file: string, text: string): string[] {
  if (!text.includes('import.meta.url')) return [];
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'URL') {
      const [path, base] = node.arguments ?? [];
      if (
        path &&
        ts.isStringLiteralLike(path) &&
        /^\.\.?\/.*\.[cm]?[jt]s$/.test(path.text) &&
        base &&
        ts.isPropertyAccessExpression(base) &&
        ts.isMetaProperty(base.expression) &&
        base.name.text === 'url'
      )
        found.push(path.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false));
  return found;
}

function resolveImport(root: string, from: string, specifier: string): string | undefined {
  const base = resolve(root, dirname(from), specifier);
  const candidates = [base, base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), `${base}.ts`, join(base, 'index.ts')];
  for (const candidate of candidates) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return relative(root, candidate).split(sep).join('/');
  }
  return undefined;
}
