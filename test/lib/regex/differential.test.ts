/**
 * Differential tests: `compileRegex` (whichever backend it picks) against a pure-re2 reference on
 * random RE2 patterns and inputs built to match them. The number of (pattern, input) pairs comes
 * from REGEX_DIFF_RUNS or FC_NUM_RUNS (default 3,000); set it to 100000 for a deep run.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planPattern } from '../../../lib/regex/compile.js';
import { compileRegex } from '../../../lib/regex/index.js';
import { nodeLinearTimeHost } from '../../../lib/regex/linear-time.js';
import { nodeRe2Engine } from '../../../lib/regex/node-re2-engine.js';
import { firstDifference } from './support/differential.js';
import { referenceCompile, referenceSearch } from './support/re2-reference.js';
import { inputsFor, re2Pattern } from './support/pattern-arbitrary.js';

const PAIRS = Number(process.env.REGEX_DIFF_RUNS ?? process.env.FC_NUM_RUNS ?? 3000);
const INPUTS_PER_PATTERN = 5;
const numRuns = Math.max(1, Math.ceil(PAIRS / INPUTS_PER_PATTERN));
const timeout = Math.max(60_000, PAIRS * 20);

const patternWithInputs = re2Pattern.chain((pattern) => fc.tuple(fc.constant(pattern), inputsFor(pattern, INPUTS_PER_PATTERN)));

describe('compileRegex against the re2 package', () => {
  it(
    'agrees on syntax errors, groups, matches, offsets, findAll, replaceAll and split',
    () => {
      fc.assert(
        fc.property(patternWithInputs, ([pattern, inputs]) => {
          expect(firstDifference(pattern, inputs)).toBeNull();
        }),
        { numRuns },
      );
    },
    timeout,
  );

  it(
    'gives the same results when V8 runs a translation on its linear-time engine',
    () => {
      const host = nodeLinearTimeHost()!;
      fc.assert(
        fc.property(patternWithInputs, ([pattern, inputs]) => {
          try {
            nodeRe2Engine.compile(pattern);
          } catch {
            return;
          }
          const { plan } = planPattern(nodeRe2Engine, host, pattern);
          if (plan.engine !== 'v8') return;
          const { bmpSource, flags } = plan.translation;
          const backtracking = new RegExp(bmpSource, flags);
          const linear = new RegExp(bmpSource, flags + 'l');
          for (const input of inputs.filter((s) => !/[\r\u2028\u2029\uD800-\uDFFF]/.test(s))) {
            expect(linear.exec(input)?.slice() ?? null).toEqual(backtracking.exec(input)?.slice() ?? null);
          }
        }),
        { numRuns: Math.max(1, Math.ceil(numRuns / 3)) },
      );
    },
    timeout,
  );

  it(
    'anchors like ^(?s:…)$ with the anchored option',
    () => {
      fc.assert(
        fc.property(
          patternWithInputs.filter(([p]) => !p.includes('\\Q')),
          ([pattern, inputs]) => {
            // A pattern that is invalid on its own (`)*(`) can become valid once wrapped; such
            // patterns are rejected by compileRegex before anchoring, so they are not compared here.
            if ('error' in referenceCompile(pattern)) return;
            const ref = referenceCompile(`^(?s:${pattern})$`);
            if ('error' in ref) return;
            const re = compileRegex(pattern, { anchored: true });
            for (const input of [...inputs, ...inputs.map((s) => s + '\n')]) {
              const want = referenceSearch(ref.re, input, 0);
              expect(re.exec(input)?.groups ?? null).toEqual(want?.groups ?? null);
            }
          },
        ),
        { numRuns: Math.max(1, Math.ceil(numRuns / 3)) },
      );
    },
    timeout,
  );
});
