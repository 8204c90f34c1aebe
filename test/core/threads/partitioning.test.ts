import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { partitioner, planPartitions, type PartitionPlan } from '../../../core/threads/partitioning.js';
import { loadStageList } from '../../../core/process.js';
import { fnv1a32 } from '../../../lib/fnv1a.js';
import { complement, intersect, names, union, type NameSet } from '../../../core/stage-partitioning.js';
import '../../../operators/index.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);

function plan(config: string): PartitionPlan {
  return planPartitions(loadStageList(config, 'plan.alloy'));
}

/** A plan in words a test can compare: the key as `all but [...]` or `only [...]`. */
function describePlan(p: PartitionPlan): string {
  if (p.kind !== 'partitioned') return p.kind === 'single' ? `single: ${p.reason}` : 'stateless';
  return 'only' in p.key ? `only [${[...p.key.only].sort().join(',')}]` : `all but [${[...p.key.allBut].sort().join(',')}]`;
}

describe('planPartitions', () => {
  it('splits a list with no stateful stage anyhow', () => {
    expect(describePlan(plan('stage.json {\n  expressions = { level = "" }\n}\nstage.labels {\n  values = { level = "" }\n}\n'))).toBe(
      'stateless',
    );
  });

  it('keys stream state on every label no earlier stage touches', () => {
    expect(describePlan(plan('stage.multiline {\n  firstline = "^x"\n}\n'))).toBe('all but []');
    expect(describePlan(plan('stage.static_labels {\n  values = { env = "prod" }\n}\nstage.multiline {\n  firstline = "^x"\n}\n'))).toBe(
      'all but [env]',
    );
    // cri writes `stream` after keying its own partial lines: a later multiline cannot use it.
    expect(describePlan(plan('stage.cri { }\nstage.multiline {\n  firstline = "^x"\n}\n'))).toBe('all but [stream]');
  });

  it('keys a limit by label on that label, unless an earlier stage writes it', () => {
    const limit = 'stage.limit {\n  rate = 10\n  burst = 10\n  drop = true\n  by_label_name = "app"\n}\n';
    expect(describePlan(plan(limit))).toBe('only [app]');
    expect(describePlan(plan(`stage.labels {\n  values = { app = "" }\n}\n${limit}`))).toBe(
      'single: stage.limit keys its state on labels that earlier stages may change',
    );
  });

  it('keeps only the kept labels after label_keep, and runs nested stages of match after what came before', () => {
    expect(
      describePlan(
        plan(
          'stage.label_keep {\n  values = ["pod", "ns"]\n}\nstage.metrics {\n  metric.counter {\n    name = "c"\n    description = "c"\n    match_all = true\n    action = "inc"\n  }\n}\n',
        ),
      ),
    ).toBe('only [ns,pod]');
    expect(
      describePlan(
        plan(
          'stage.label_drop {\n  values = ["pod"]\n}\nstage.match {\n  selector = "{app=\\"a\\"}"\n  stage.multiline {\n    firstline = "^x"\n  }\n}\n',
        ),
      ),
    ).toBe('all but [pod]');
  });

  it('runs a list with one state for all entries on one thread, and says why', () => {
    expect(describePlan(plan('stage.limit {\n  rate = 10\n  burst = 10\n}\n'))).toBe(
      'single: stage.limit without by_label_name keeps one rate for all entries',
    );
    expect(
      describePlan(
        plan('stage.regex {\n  expression = "(?P<a>.)"\n  labels_from_groups = true\n}\nstage.multiline {\n  firstline = "^x"\n}\n'),
      ),
    ).toBe('single: stage.multiline keys its state on labels that earlier stages may change');
  });
});

const nameArb = fc.constantFrom('a', 'b', 'c', 'd');
const nameSetArb: fc.Arbitrary<NameSet> = fc
  .tuple(fc.boolean(), fc.uniqueArray(nameArb))
  .map(([cofinite, list]) => (cofinite ? { allBut: new Set(list) } : names(list)));
const has = (set: NameSet, name: string) => ('only' in set ? set.only.has(name) : !set.allBut.has(name));

describe('label name sets', () => {
  it('union, intersection and complement agree with membership', () => {
    fc.assert(
      fc.property(nameSetArb, nameSetArb, fc.constantFrom('a', 'b', 'c', 'd', 'e'), (a, b, n) => {
        expect(has(union(a, b), n)).toBe(has(a, n) || has(b, n));
        expect(has(intersect(a, b), n)).toBe(has(a, n) && has(b, n));
        expect(has(complement(a), n)).toBe(!has(a, n));
      }),
      { numRuns },
    );
  });
});

describe('partitioner', () => {
  const labelsArb = fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 6 }), { maxKeys: 5 });

  it('depends only on the key labels, not on other labels or insertion order', () => {
    fc.assert(
      fc.property(labelsArb, labelsArb, fc.integer({ min: 1, max: 8 }), (labels, other, count) => {
        const key: NameSet = { only: new Set(Object.keys(labels)) };
        const extra = Object.fromEntries(Object.entries(other).filter(([n]) => !Object.hasOwn(labels, n)));
        const reversed = Object.fromEntries(Object.entries({ ...labels, ...extra }).reverse());
        const partitionOf = partitioner(key, count);
        const p = partitionOf(labels);
        expect(p).toBeGreaterThanOrEqual(0);
        expect(p).toBeLessThan(count);
        expect(partitionOf(reversed)).toBe(p);
      }),
      { numRuns },
    );
  });

  it('hashes the key labels in name order, each name and value followed by a NUL', () => {
    const partitionOf = partitioner({ only: new Set(['b', 'a']) }, 1000);
    const hash = fnv1a32(
      '\u0000',
      fnv1a32('2', fnv1a32('\u0000', fnv1a32('b', fnv1a32('\u0000', fnv1a32('1', fnv1a32('\u0000', fnv1a32('a'))))))),
    );
    expect(partitionOf({ b: '2', c: '3', a: '1' })).toBe(hash % 1000);
  });

  it('spreads streams over the partitions', () => {
    const counts = [0, 0, 0];
    const partitionOf = partitioner({ allBut: new Set() }, 3);
    for (let pod = 0; pod < 300; pod++) counts[partitionOf({ namespace: 'prod', pod: `web-${pod}` })]!++;
    for (const n of counts) expect(n).toBeGreaterThan(70);
  });
});
