/** Syntax tree of an RE2 pattern after flags have been applied to every node. */
import type { CodePointSet } from './code-point-set.js';

export type Assertion = 'beginText' | 'endText' | 'beginLine' | 'endLine' | 'wordBoundary' | 'notWordBoundary';

export type RegexNode =
  | { readonly kind: 'empty' }
  /** One code point from a set known without asking the engine (ASCII classes, literals, `.`). */
  | { readonly kind: 'chars'; readonly set: CodePointSet }
  /**
   * One code point from a set only the RE2 engine can spell out (Unicode classes, case folding
   * beyond ASCII). `query` is an RE2 pattern matching exactly one code point of the set.
   */
  | { readonly kind: 'engineChars'; readonly query: string }
  | { readonly kind: 'concat'; readonly items: readonly RegexNode[] }
  | { readonly kind: 'alternate'; readonly items: readonly RegexNode[] }
  | { readonly kind: 'capture'; readonly index: number; readonly name: string | undefined; readonly body: RegexNode }
  | {
      readonly kind: 'repeat';
      readonly min: number;
      /** `Infinity` when unbounded. */
      readonly max: number;
      readonly greedy: boolean;
      readonly body: RegexNode;
    }
  | { readonly kind: 'assert'; readonly assertion: Assertion }
  /** `\C`: one byte of the UTF-8 encoding, which has no UTF-16 counterpart. */
  | { readonly kind: 'anyByte' };

export interface ParsedPattern {
  readonly root: RegexNode;
  /** Index i = name of capture group i; index 0 (the whole match) is always undefined. */
  readonly groupNames: readonly (string | undefined)[];
  readonly numGroups: number;
  /** True when a `\Q` runs to the end of the pattern, so text appended to it would be quoted too. */
  readonly endsInQuote: boolean;
}
