import fc from 'fast-check';
import { describe, it } from 'vitest';
import { expectSameAsInPlace, groupBodies, numRuns, outcome, pushGroups, sendGroups, stageListOftenMultiline } from './pipelines.js';

describe('a sharded run, for random stage lists and pushes sent several at once', () => {
  it('gives every stream, on two shards or three, the entries, the order and the metric values of one thread', async () => {
    await fc.assert(
      // One shard count a run: a shard thread takes seconds to start from the sources.
      fc.asyncProperty(stageListOftenMultiline, pushGroups, fc.constantFrom('2', '3'), async (stages, groups, shards) => {
        const sent = groupBodies(groups);
        const inPlace = await outcome(stages, ['--workers', '1'], (run) => sendGroups(run, sent));
        const sharded = await outcome(stages, ['--shards', shards], (run) => sendGroups(run, sent));
        expectSameAsInPlace(sharded, inPlace, stages);
      }),
      { numRuns, endOnFailure: true },
    );
  }, 300_000);
});
