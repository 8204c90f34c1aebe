/**
 * What a stage declares about its state and the labels it changes, so a stage list can be spread
 * over pipeline instances by label (see partitioning.ts), and the little set algebra on label names
 * that planning needs.
 */
/** A set of label names: a finite list, or every name except a finite list. */
export type NameSet = { readonly only: ReadonlySet<string> } | { readonly allBut: ReadonlySet<string> };

export const NO_NAMES: NameSet = { only: new Set() };
export const ALL_NAMES: NameSet = { allBut: new Set() };

export function names(list: Iterable<string>): NameSet {
  return { only: new Set(list) };
}

export function union(a: NameSet, b: NameSet): NameSet {
  if ('only' in a && 'only' in b) return { only: new Set([...a.only, ...b.only]) };
  if ('allBut' in a && 'allBut' in b) return { allBut: new Set([...a.allBut].filter((n) => b.allBut.has(n))) };
  const [finite, cofinite] =
    'only' in a ? [a.only, (b as { allBut: ReadonlySet<string> }).allBut] : [(b as { only: ReadonlySet<string> }).only, a.allBut];
  return { allBut: new Set([...cofinite].filter((n) => !finite.has(n))) };
}

export function intersect(a: NameSet, b: NameSet): NameSet {
  return complement(union(complement(a), complement(b)));
}

export function complement(a: NameSet): NameSet {
  return 'only' in a ? { allBut: a.only } : { only: a.allBut };
}

export function isEmpty(a: NameSet): boolean {
  return 'only' in a && a.only.size === 0;
}

/** Whose state a stage keeps, as far as partitioning is concerned. */
export type StageState =
  | { readonly by: 'none' }
  | { readonly by: 'stream' }
  | { readonly by: 'labels'; readonly names: readonly string[] }
  /** One state for all entries; the reason says so in words for the log. */
  | { readonly by: 'all'; readonly reason: string };

/** What a stage declares for partitioning: the labels it may write or remove, and its state. */
export interface StagePartitioning {
  readonly writes: NameSet;
  readonly state: StageState;
  /** Stages nested in this one (stage.match), which run after the labels it writes. */
  readonly nested?: readonly PartitionedStage[];
}

/** A stateless stage that touches no label. */
export const PER_ENTRY: StagePartitioning = { writes: NO_NAMES, state: { by: 'none' } };

/** The part of a stage spec partitioning reads (a StageSpec is one). */
export interface PartitionedStage {
  readonly def: { readonly name: string; readonly partitioning?: (config: any) => StagePartitioning };
  readonly config: Record<string, unknown>;
}
