import {
  type Document,
  isMap,
  isScalar,
  isSeq,
  type LineCounter,
  type Node,
  type Pair,
  type Scalar,
  type YAMLMap,
  type YAMLSeq,
  visit,
} from 'yaml';
import type { ConvertWarning } from './conversion.js';

/**
 * A parsed YAML document read with its positions: the Promtail conversion reads every value
 * through it so that each warning can say where in the file the construct is.
 */
export class YamlReader {
  readonly warnings: ConvertWarning[] = [];

  constructor(
    readonly file: string,
    private readonly lineCounter: LineCounter,
  ) {}

  /** 1-based line and column of a node (or of a mapping key). */
  position(node: Node | null | undefined): { line: number; col: number } {
    const offset = node?.range?.[0] ?? 0;
    return this.lineCounter.linePos(offset);
  }

  warn(node: Node | null | undefined, message: string): void {
    this.warnings.push({ file: this.file, ...this.position(node), message });
  }

  /** The warnings in the order of the file (stable: one place keeps the order they were made in). */
  sortedWarnings(): ConvertWarning[] {
    return [...this.warnings].sort((a, b) => a.line - b.line || a.col - b.col);
  }
}

/**
 * Puts the node each alias (`*name`) stands for in its place, so the conversion reads a value
 * the same way wherever it was written; its warnings then point at the anchored original.
 */
export function resolveAliases(doc: Document): void {
  visit(doc, {
    Alias(_key, alias) {
      return alias.resolve(doc);
    },
  });
}

/**
 * The key/value pairs of a mapping node, keys as text; anything else has none. A merge key
 * (`<<: *defaults`) gives the pairs of the mapping it names, then the mapping's own pairs win.
 */
export function pairsOf(node: unknown): Array<{ key: string; keyNode: Node; value: Node | null }> {
  if (!isMap(node)) return [];
  const pairs = new Map<string, { key: string; keyNode: Node; value: Node | null }>();
  for (const pair of (node as YAMLMap<Node, Node | null>).items as Pair<Node, Node | null>[]) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    if (key === '<<') {
      for (const merged of isSeq(pair.value) ? itemsOf(pair.value) : [pair.value])
        for (const p of pairsOf(merged)) if (!pairs.has(p.key)) pairs.set(p.key, p);
      continue;
    }
    pairs.delete(key);
    pairs.set(key, { key, keyNode: pair.key, value: pair.value ?? null });
  }
  return [...pairs.values()];
}

/** The value node under `key` in a mapping node. */
export function get(node: unknown, key: string): Node | null | undefined {
  return pairsOf(node).find((p) => p.key === key)?.value;
}

/** The items of a sequence node; anything else has none. */
export function itemsOf(node: unknown): Node[] {
  return isSeq(node) ? ((node as YAMLSeq<Node>).items as Node[]) : [];
}

/**
 * A scalar as the text Promtail's decoder would see: strings as they are, other scalars as
 * written in the file (`1.0` stays `1.0`), null as undefined.
 */
export function scalarText(node: unknown): string | undefined {
  if (!isScalar(node)) return undefined;
  const scalar = node as Scalar;
  if (scalar.value === null || scalar.value === undefined) return undefined;
  if (typeof scalar.value === 'string') return scalar.value;
  return scalar.source ?? String(scalar.value);
}

export { isMap, isScalar, isSeq };
