import fc from 'fast-check';
import { describe, it } from 'vitest';
import { bodies, expectSameAsInPlace, numRuns, outcome, sendGroups, slice, stageListOftenMultiline } from './pipelines.js';

describe('a sharded run, for random stage lists and pushes', () => {
  it('gives every stream the entries, in the order, and the metric values that one thread gives', async () => {
    await fc.assert(
      fc.asyncProperty(
        stageListOftenMultiline,
        fc.array(fc.array(slice, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
        async (stages, pushes) => {
          // One push at a time.
          const groups = bodies(pushes).map((streams) => [streams]);
          const inPlace = await outcome(stages, ['--workers', '1'], (run) => sendGroups(run, groups));
          const sharded = await outcome(stages, ['--shards', '2'], (run) => sendGroups(run, groups));
          // Stopped: every block the stages held is flushed and written, by the shards as in place.
          expectSameAsInPlace(sharded, inPlace, stages);
        },
      ),
      { numRuns, endOnFailure: true },
    );
  }, 300_000);
});
