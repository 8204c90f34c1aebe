/** A position in a config file (1-based line and column, column counted in characters). */
export interface Position {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  /** 0-based character offset into the file text. */
  readonly offset: number;
}

/**
 * A configuration error found at build time. `toString()` gives the `FILE:LINE:COL: message`
 * form that the CLI prints; the block path (`logs.process "default" > stage.json`) is part of
 * the message so a reader knows which block is meant without opening the file.
 */
export class ConfigError extends Error {
  constructor(
    readonly reason: string,
    readonly pos?: Position,
    readonly blockPath: readonly string[] = [],
  ) {
    super(formatConfigMessage(reason, pos, blockPath));
    this.name = 'ConfigError';
  }

  /** The same error, placed in a block (outermost first) and at a position when it had none. */
  within(blockPath: readonly string[], pos?: Position): ConfigError {
    const path = this.blockPath.length > 0 ? [...blockPath, ...this.blockPath] : [...blockPath];
    return new ConfigError(this.reason, this.pos ?? pos, path);
  }

  override toString(): string {
    return this.message;
  }
}

/** Several config errors reported together (a parse that recovered, or several bad blocks). */
export class ConfigErrors extends Error {
  constructor(readonly errors: readonly ConfigError[]) {
    super(errors.map((e) => e.message).join('\n'));
    this.name = 'ConfigErrors';
  }
}

function formatConfigMessage(reason: string, pos: Position | undefined, blockPath: readonly string[]): string {
  const where = pos ? `${pos.file}:${pos.line}:${pos.col}: ` : '';
  const path = blockPath.length > 0 ? `${blockPath.join(' > ')}: ` : '';
  return `${where}${path}${reason}`;
}

/** Collects every ConfigError from an error thrown while building; rethrows anything else. */
export function configErrorsOf(err: unknown): ConfigError[] {
  if (err instanceof ConfigErrors) return [...err.errors];
  if (err instanceof ConfigError) return [err];
  throw err;
}

/** Where inside a block a FieldError's field is. */
export interface FieldPlace {
  /**
   * The nested blocks, outermost first, that hold the field: `{ block: 'metric.counter', index: 1 }`
   * is the second `metric.counter` block written.
   */
  readonly nested?: readonly { readonly block: string; readonly index: number }[];
  /** An index into the field's string value where the problem is (a regex's unbalanced `(`). */
  readonly offset?: number;
}

/**
 * A validation error about one field of a block, raised by a stage's pure validation. The decoder
 * places it at that attribute's position (or the block's, when the attribute was not written);
 * `place` can name a nested block and a character inside a string literal.
 */
export class FieldError extends ConfigError {
  constructor(
    readonly field: string,
    reason: string,
    readonly place: FieldPlace = {},
  ) {
    super(reason);
    this.name = 'FieldError';
  }
}
