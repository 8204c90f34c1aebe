/**
 * Which entries must meet in one pipeline instance for a stage list to behave exactly as it does
 * on one thread, and from that, how entries are spread over several instances (worker threads).
 *
 * A stateful stage keeps state per key: per stream (the whole label set where the stage sits:
 * multiline, cri's partial lines, timestamp's last times, metrics series), per value of some labels
 * (limit by label), or one state for everything (a global limit). Two entries sharing that key
 * must reach the same instance. At ingress we only know the entries' labels as they arrive, and the
 * stages before a stateful stage may have written or removed some of them; but a label that no
 * earlier stage touches has the same value at ingress as at the stage. So hashing the entries on
 * the labels that the stateful stages key on, minus every label touched before them, sends every
 * pair that shares a key to the same instance: that is the partition key. Entries of one stream
 * always share it, so each stream keeps its order. When no such label is left, everything shares
 * one key and the stage list runs on one thread.
 */
import { fnv1a32 } from '../../lib/fnv1a.js';
import type { Labels } from '../entry.js';
import {
  ALL_NAMES,
  complement,
  intersect,
  isEmpty,
  names,
  NO_NAMES,
  union,
  type NameSet,
  type PartitionedStage,
  type StagePartitioning,
} from '../stage-partitioning.js';

/** What a stage that says nothing is taken to do: anything to any label, with shared state. */
function undeclared(spec: PartitionedStage): StagePartitioning {
  return { writes: ALL_NAMES, state: { by: 'all', reason: `stage.${spec.def.name} does not declare how its state is keyed` } };
}

/** How a stage list can be spread over instances. */
export type PartitionPlan =
  /** No stage keeps state: entries may be split anyhow (outputs are put back in order). */
  | { readonly kind: 'stateless' }
  | { readonly kind: 'partitioned'; readonly key: NameSet }
  | { readonly kind: 'single'; readonly reason: string };

/** Plans the partition key of a stage list (see the module comment). */
export function planPartitions(specs: readonly PartitionedStage[]): PartitionPlan {
  const walk = planWalk(specs, NO_NAMES, ALL_NAMES);
  if ('reason' in walk) return { kind: 'single', reason: walk.reason };
  if (!walk.stateful) return { kind: 'stateless' };
  if (isEmpty(walk.key)) return { kind: 'single', reason: walk.emptyBecause ?? 'no label keeps its value up to the stateful stages' };
  return { kind: 'partitioned', key: walk.key };
}

type Walk =
  | { readonly touched: NameSet; readonly key: NameSet; readonly stateful: boolean; readonly emptyBecause?: string }
  | { readonly reason: string };

function planWalk(specs: readonly PartitionedStage[], touchedBefore: NameSet, keyBefore: NameSet): Walk {
  let touched = touchedBefore;
  let key = keyBefore;
  let emptyBecause: string | undefined;
  let stateful = false;
  for (const spec of specs) {
    const declared = spec.def.partitioning?.(spec.config) ?? undeclared(spec);
    const { state } = declared;
    if (state.by === 'all') return { reason: state.reason };
    if (state.by !== 'none') {
      stateful = true;
      const keyed = state.by === 'stream' ? ALL_NAMES : names(state.names);
      const usable = intersect(keyed, complement(touched));
      key = intersect(key, usable);
      if (isEmpty(key) && emptyBecause === undefined)
        emptyBecause = `stage.${spec.def.name} keys its state on labels that earlier stages may change`;
    }
    touched = union(touched, declared.writes);
    if (declared.nested) {
      const inner = planWalk(declared.nested, touched, key);
      if ('reason' in inner) return inner;
      touched = inner.touched;
      key = inner.key;
      stateful ||= inner.stateful;
      emptyBecause ??= inner.emptyBecause;
    }
  }
  return { touched, key, stateful, ...(emptyBecause ? { emptyBecause } : {}) };
}

/**
 * The partition (0 … count-1) of an entry's labels under `key`: FNV-1a over the key's labels in
 * name order, so the same labels give the same partition whatever their insertion order. The
 * test of which names belong to the key is made once here, not per entry; a caller that sees the
 * same set again keeps its partition (PartitionedPipeline does, per batch).
 */
export function partitioner(key: NameSet, count: number): (labels: Labels) => number {
  if (count <= 1) return () => 0;
  const inKey = 'only' in key ? (name: string) => key.only.has(name) : (name: string) => !key.allBut.has(name);
  return (labels) => {
    const keyNames = Object.keys(labels).filter(inKey);
    if (keyNames.length > 1) keyNames.sort();
    let hash: number | undefined;
    // A separator after each text keeps `a`+`bc` apart from `ab`+`c` (a clash would only spread worse).
    for (const name of keyNames) hash = fnv1a32(SEPARATOR, fnv1a32(labels[name]!, fnv1a32(SEPARATOR, fnv1a32(name, hash))));
    return (hash ?? 0) % count;
  };
}

const SEPARATOR = '\u0000';
