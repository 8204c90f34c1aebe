import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  groupBodies,
  numRuns,
  outcome,
  pushGroups,
  reload,
  sendGroups,
  stageList,
  stageListOftenMultiline,
  type StageName,
  withStage,
} from './pipelines.js';

/** The stage list a reload brings: another random one, or the first with one stage added or taken out. */
const reloadedList = (first: readonly StageName[]) =>
  fc.oneof(
    stageList,
    fc.tuple(fc.nat(), stageList).map(([at, [stage]]) => withStage(first, at % (first.length + 1), stage)),
    fc.nat().map((at) => (first.length > 1 ? withStage(first, at % first.length) : first)),
  );

describe('reloading a sharded run, for random stage lists and pushes', () => {
  it('gives every stream the entries, in the order, and the metric values that one thread gives across the reload', async () => {
    await fc.assert(
      fc.asyncProperty(
        stageListOftenMultiline.chain((first) => fc.tuple(fc.constant(first), reloadedList(first))),
        pushGroups,
        pushGroups,
        fc.constantFrom('2', '3'),
        async ([first, second], before, after, shards) => {
          const sent = groupBodies([...before, ...after]);
          const work = async (run: Parameters<Parameters<typeof outcome>[2]>[0]) => {
            await sendGroups(run, sent.slice(0, before.length));
            await reload(run, second);
            await sendGroups(run, sent.slice(before.length));
          };
          const inPlace = await outcome(first, ['--workers', '1'], work);
          const sharded = await outcome(first, ['--shards', shards], work);
          expect(sharded.entries).toEqual(inPlace.entries);
          expect(sharded.metrics).toEqual(inPlace.metrics);
          expect(sharded.flushed).toEqual(inPlace.flushed);
        },
      ),
      { numRuns, endOnFailure: true },
    );
  }, 300_000);
});
