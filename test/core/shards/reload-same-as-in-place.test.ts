import fc from 'fast-check';
import { describe, it } from 'vitest';
import {
  expectSameAsInPlace,
  groupBodies,
  numRuns,
  outcome,
  pushGroups,
  reload,
  sendGroups,
  STAGE_NAMES,
  type StageName,
  stageList,
  stageListOftenMultiline,
  withStage,
} from './pipelines.js';
import type { CommandRun } from './support.js';

/** What a reload makes of the running stage list: another list, or the same with one stage added or taken out. */
type Edit =
  | { readonly list: readonly StageName[] }
  | { readonly insertAt: number; readonly stage: StageName }
  | { readonly removeAt: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  stageList.map((list) => ({ list })),
  fc.record({ insertAt: fc.nat(), stage: fc.constantFrom(...STAGE_NAMES) }),
  fc.record({ removeAt: fc.nat() }),
);

function edited(stages: readonly StageName[], change: Edit): readonly StageName[] {
  if ('list' in change) return change.list;
  if ('stage' in change) return withStage(stages, change.insertAt % (stages.length + 1), change.stage);
  return stages.length > 1 ? withStage(stages, change.removeAt % stages.length) : stages;
}

describe('reloading a sharded run, for random stage lists and pushes', () => {
  it('gives every stream the entries, in the order, and the metric values that one thread gives across reloads', async () => {
    await fc.assert(
      fc.asyncProperty(
        stageListOftenMultiline,
        pushGroups,
        // One reload or two, each followed by pushes.
        fc.array(fc.record({ edit, pushes: pushGroups }), { minLength: 1, maxLength: 2 }),
        fc.constantFrom('2', '3'),
        async (first, before, reloads, shards) => {
          const sent = groupBodies([before, ...reloads.map((r) => r.pushes)].flat());
          const work = async (run: CommandRun) => {
            let stages: readonly StageName[] = first;
            let at = before.length;
            await sendGroups(run, sent.slice(0, at));
            for (const { edit: change, pushes } of reloads) {
              stages = edited(stages, change);
              await reload(run, stages);
              await sendGroups(run, sent.slice(at, (at += pushes.length)));
            }
          };
          const inPlace = await outcome(first, ['--workers', '1'], work);
          const sharded = await outcome(first, ['--shards', shards], work);
          expectSameAsInPlace(sharded, inPlace);
        },
      ),
      { numRuns, endOnFailure: true },
    );
  }, 300_000);
});
