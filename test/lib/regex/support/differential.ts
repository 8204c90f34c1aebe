/**
 * Compares `compileRegex` (whatever backend it picks) with the pure-re2 reference on one pattern
 * and a few inputs; returns a description of the first difference, or null.
 */
import { planPattern } from '../../../../lib/regex/compile.js';
import { compileRegex, type Regex, type RegexMatch, RegexSyntaxError } from '../../../../lib/regex/index.js';
import { nodeLinearTimeHost } from '../../../../lib/regex/linear-time.js';
import { nodeRe2Engine } from '../../../../lib/regex/node-re2-engine.js';
import {
  referenceCompile,
  referenceFindAll,
  type ReferenceMatch,
  referenceReplaceGroupOne,
  referenceSearch,
  referenceSplit,
} from './re2-reference.js';

const wellFormed = (s: string): string => (s as unknown as { toWellFormed(): string }).toWellFormed();

function sameMatch(ours: RegexMatch | null, ref: ReferenceMatch | null, regex: Regex): string | null {
  if (ours === null || ref === null)
    return ours === ref ? null : `match ${JSON.stringify(ours?.groups ?? null)} vs ${JSON.stringify(ref?.groups ?? null)}`;
  if (ours.index !== ref.index || ours.end !== ref.end) return `span [${ours.index},${ours.end}) vs [${ref.index},${ref.end})`;
  if (JSON.stringify(ours.groups) !== JSON.stringify(ref.groups))
    return `groups ${JSON.stringify(ours.groups)} vs ${JSON.stringify(ref.groups)}`;
  if (JSON.stringify(ours.indices) !== JSON.stringify(ref.indices))
    return `indices ${JSON.stringify(ours.indices)} vs ${JSON.stringify(ref.indices)}`;
  for (const [name, value] of Object.entries(ref.named)) {
    const i = regex.groupNames.indexOf(name);
    if (i < 1 || ours.groups[i] !== value)
      return `named group ${name}: index ${i}, ${JSON.stringify(ours.groups[i])} vs ${JSON.stringify(value)}`;
  }
  return null;
}

export function firstDifference(pattern: string, inputs: readonly string[]): string | null {
  const ref = referenceCompile(pattern);
  let regex: Regex;
  try {
    regex = compileRegex(pattern);
  } catch (error) {
    if (!(error instanceof RegexSyntaxError)) return `unexpected ${String(error)}`;
    if ('error' in ref)
      return error.message === ref.error ? null : `error ${JSON.stringify(error.message)} vs ${JSON.stringify(ref.error)}`;
    return `rejected: ${error.message}`;
  }
  if ('error' in ref) return `accepted although re2 says ${ref.error}`;
  const { plan } = planPattern(nodeRe2Engine, nodeLinearTimeHost(), pattern);
  if (plan.engine === 're2' && /^(translation rejected|not understood)/.test(plan.reason)) return `translator failure: ${plan.reason}`;
  const empty = referenceCompile(`(?:${pattern})|`);
  if (!('error' in empty)) {
    const m = referenceSearch(empty.re, '', 0);
    if (m !== null && m.groups.length !== regex.numGroups + 1) return `numGroups ${regex.numGroups} vs ${m.groups.length - 1}`;
  }
  for (const input of inputs) {
    const where = `[${regex.engine}] on ${JSON.stringify(input)}: `;
    const first = referenceSearch(ref.re, input, 0);
    if (regex.test(input) !== (first !== null)) return where + `test ${regex.test(input)}`;
    const d1 = sameMatch(regex.exec(input), first, regex);
    if (d1 !== null) return where + 'exec ' + d1;
    const ours = regex.findAll(input);
    const theirs = referenceFindAll(ref.re, input);
    if (ours.length !== theirs.length) return where + `findAll count ${ours.length} vs ${theirs.length}`;
    for (let i = 0; i < ours.length; i++) {
      const d = sameMatch(ours[i]!, theirs[i]!, regex);
      if (d !== null) return where + `findAll[${i}] ` + d;
    }
    const text = wellFormed(input);
    const replaced = regex.replaceAll(input, '<$1>');
    const refReplaced = referenceReplaceGroupOne(ref.re, text, '<', '>');
    if (replaced !== refReplaced) return where + `replaceAll ${JSON.stringify(replaced)} vs ${JSON.stringify(refReplaced)}`;
    const split = regex.split(input);
    const refSplit = referenceSplit(ref.re, pattern, text);
    if (JSON.stringify(split) !== JSON.stringify(refSplit)) return where + `split ${JSON.stringify(split)} vs ${JSON.stringify(refSplit)}`;
  }
  return null;
}
