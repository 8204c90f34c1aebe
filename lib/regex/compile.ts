/**
 * The compile pipeline shared by the Node and browser entries:
 * make repeated group names unique → validate with the RE2 engine → parse → check the translation
 * is exact → spell out Unicode classes → write JavaScript source → confirm V8 can run it in linear
 * time → pick a backend.
 * Any step that is not sure sends the pattern to the RE2 engine.
 */
import type { ParsedPattern, RegexNode } from './ast.js';
import { engineCodePoints } from './engine-code-points.js';
import type { CodePointSet } from './code-point-set.js';
import { emitV8 } from './emit-v8.js';
import type { Re2Engine, Re2Program } from './engine.js';
import { canMatchEmpty, untranslatableReason, usesLineAnchors } from './exactness.js';
import { Re2Regex } from './engine-backend.js';
import { rewriteJsEscapes } from './js-escapes.js';
import { simplifyForV8 } from './simplify.js';
import { uniqueGroupNames } from './group-names.js';
import { parseRe2, UnexpectedSyntax } from './parser.js';
import { type CompileOptions, type Regex, RegexSyntaxError } from './types.js';
import { V8Regex, type V8Translation } from './v8-backend.js';

/**
 * Unrolled counted repetitions of large Unicode classes can reach megabytes of source, which V8
 * compiles slowly and RE2 runs just as well.
 */
const MAX_TRANSLATION_LENGTH = 100_000;

/** What the JavaScript runtime offers for running translated patterns. */
export interface LinearTimeHost {
  /** Whether V8 would switch `new RegExp(source, flags)` to its linear-time engine when it backtracks too much. */
  runsInLinearTime(source: string, flags: string): boolean;
}

/** The outcome of planning a pattern, exposed for tests and diagnostics. */
export type Plan =
  | { readonly engine: 'v8'; readonly parsed: ParsedPattern; readonly translation: V8Translation }
  | { readonly engine: 're2'; readonly parsed: ParsedPattern | undefined; readonly reason: string };

export function compileWith(engine: Re2Engine, host: LinearTimeHost | null, pattern: string, options: CompileOptions = {}): Regex {
  // Go accepts a group name used twice; the engines see unique names, the user gets theirs back.
  const unique = uniqueGroupNames(pattern);
  let validated: Re2Program;
  try {
    validated = engine.compile(unique.pattern);
  } catch (error) {
    if (error instanceof RegexSyntaxError) throw new RegexSyntaxError(unique.restoreMessage(error.message));
    throw error;
  }
  const { plan, engineSource } = planPattern(engine, host, unique.pattern, options);
  let program: Re2Program | undefined = engineSource === unique.pattern ? validated : undefined;
  const re2 = (): Re2Program => (program ??= engine.compile(engineSource));
  const groupNames = unique.restoreNames(plan.parsed?.groupNames ?? unnamedGroups(engine, engineSource));
  const info = { source: pattern, groupNames };
  return plan.engine === 'v8' ? new V8Regex(info, plan.translation, re2) : new Re2Regex(info, re2());
}

/** Decides the backend for an already validated pattern; `engineSource` is what RE2 runs. */
export function planPattern(
  engine: Re2Engine,
  host: LinearTimeHost | null,
  pattern: string,
  options: CompileOptions = {},
): { plan: Plan; engineSource: string } {
  const dotAll = options.dotAll ?? options.anchored ?? false;
  let parsed: ParsedPattern;
  try {
    parsed = parseRe2(rewriteJsEscapes(pattern), { dotNL: dotAll });
  } catch (error) {
    if (!(error instanceof UnexpectedSyntax)) throw error;
    const engineSource = wrapForEngine(pattern, options.anchored ?? false, dotAll, false);
    return { plan: { engine: 're2', parsed: undefined, reason: `not understood by the translator: ${error.message}` }, engineSource };
  }
  const engineSource = wrapForEngine(pattern, options.anchored ?? false, dotAll, parsed.endsInQuote);
  const root: RegexNode = simplifyForV8(
    options.anchored
      ? { kind: 'concat', items: [{ kind: 'assert', assertion: 'beginText' }, parsed.root, { kind: 'assert', assertion: 'endText' }] }
      : parsed.root,
  );
  const result = (plan: Plan) => ({ plan, engineSource });
  if (host === null) return result({ engine: 're2', parsed, reason: 'this runtime has no linear-time RegExp fallback' });
  const reason = untranslatableReason(root);
  if (reason !== null) return result({ engine: 're2', parsed, reason });
  const engineSets = resolveEngineChars(engine, root);
  const flags = usesLineAnchors(root) ? 'm' : '';
  for (const unrollCounted of [false, true]) {
    const bmpSource = emitV8(root, { variant: 'bmp', engineSets, unrollCounted });
    const fullSource = emitV8(root, { variant: 'full', engineSets, unrollCounted });
    if (fullSource.length > MAX_TRANSLATION_LENGTH) break;
    const invalid = syntaxErrorIn([bmpSource, fullSource], flags);
    // Never expected: the translator wrote something V8 does not parse.
    if (invalid !== null) return result({ engine: 're2', parsed, reason: `translation rejected by V8: ${invalid}` });
    if (!host.runsInLinearTime(bmpSource, flags) || !host.runsInLinearTime(fullSource, flags)) continue;
    // Without surrogates in any class, a non-empty match can never start inside a pair either.
    const surrogatesNeedFullSource = bmpSource !== fullSource || canMatchEmpty(root);
    return result({ engine: 'v8', parsed, translation: { bmpSource, fullSource, flags, surrogatesNeedFullSource } });
  }
  return result({ engine: 're2', parsed, reason: 'V8 cannot run a translation of reasonable size in linear time' });
}

function syntaxErrorIn(sources: readonly string[], flags: string): string | null {
  for (const source of sources) {
    try {
      new RegExp(source, flags);
    } catch (error) {
      return (error as Error).message;
    }
  }
  return null;
}

/**
 * The text RE2 runs. Anchoring wraps the pattern the way Prometheus does, `^(?s:…)$`; a `\Q` left
 * open at the end of the pattern is closed first so the wrapper is not quoted.
 */
function wrapForEngine(pattern: string, anchored: boolean, dotAll: boolean, endsInQuote: boolean): string {
  if (anchored) return `^(?${dotAll ? 's' : ''}:${pattern}${endsInQuote ? '\\E' : ''})$`;
  return dotAll ? `(?s)${pattern}` : pattern;
}

function resolveEngineChars(engine: Re2Engine, root: RegexNode): Map<string, CodePointSet> {
  const sets = new Map<string, CodePointSet>();
  const visit = (node: RegexNode): void => {
    if (node.kind === 'engineChars' && !sets.has(node.query)) sets.set(node.query, engineCodePoints(engine, node.query));
    if (node.kind === 'concat' || node.kind === 'alternate') node.items.forEach(visit);
    if (node.kind === 'capture' || node.kind === 'repeat') visit(node.body);
  };
  visit(root);
  return sets;
}

/**
 * Only reached if the translator's parser ever fails on a pattern RE2 accepted: the group count
 * comes from matching an added empty alternative; names cannot be recovered that way.
 */
function unnamedGroups(engine: Re2Engine, engineSource: string): (string | undefined)[] {
  for (const suffix of ['|', '\\E|']) {
    try {
      const m = engine.compile(engineSource + suffix).search('', 0);
      if (m !== null) return m.groups.map(() => undefined);
    } catch {
      // The suffix did not fit this pattern; try the next.
    }
  }
  return [undefined];
}
