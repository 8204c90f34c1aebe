/** Runs a pattern on the RE2 engine itself, for patterns without an exact JavaScript translation. */
import type { Re2Program } from './engine.js';
import { type PatternInfo, RegexBase, type Search } from './regex-base.js';

export class Re2Regex extends RegexBase {
  readonly engine = 're2' as const;

  constructor(
    info: PatternInfo,
    private readonly program: Re2Program,
  ) {
    super(info);
  }

  protected searchIn(text: string): Search {
    return (from) => this.program.search(text, from);
  }
}
