/** What a conversion gives: the Rivulet config text and what could not be carried over. */
export interface Conversion {
  readonly output: string;
  readonly warnings: readonly ConvertWarning[];
}

/** Something the input says that the output does not, or says differently, and where. */
export interface ConvertWarning {
  readonly file: string;
  /** 1-based line and column of the construct in the input. */
  readonly line: number;
  readonly col: number;
  readonly message: string;
}

/** `FILE:LINE:COL: warning: message`, as the command prints a warning on stderr. */
export function formatWarning(warning: ConvertWarning): string {
  return `${warning.file}:${warning.line}:${warning.col}: warning: ${warning.message}`;
}

/** The option both conversions take. */
export interface ConvertOptions {
  /**
   * Write out the metric name prefix the input's agent used by default, so converted metrics keep
   * their names and the dashboards built on them keep working (default true).
   */
  readonly keepNames: boolean;
}
