/**
 * Go error chains: `fmt.Errorf("context: %w", cause)`, `errors.Join` and `errors.As`. The
 * reference answers clients from the shape of an error tree (is there a downstream status in
 * it?), and its messages read `context: cause`, joined one per line.
 */

/** An error whose message is `<context>: <cause's message>`; the cause stays inspectable. */
export class WrappedError extends Error {
  constructor(
    context: string,
    override readonly cause: unknown,
  ) {
    super(`${context}: ${messageOf(cause)}`);
    this.name = 'WrappedError';
  }
}

/** Several errors reported as one; the message lists them one per line. */
export class JoinedError extends Error {
  constructor(readonly errors: readonly unknown[]) {
    super(errors.map(messageOf).join('\n'));
    this.name = 'JoinedError';
  }
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The errors joined into one, or undefined when there are none. */
export function joinErrors(errors: readonly unknown[]): Error | undefined {
  if (errors.length === 0) return undefined;
  return new JoinedError(errors);
}

/**
 * The first error in `err`'s tree that `guard` accepts, searching depth first through causes and
 * joined lists in order (how the reference finds a typed error inside a joined one).
 */
export function findError<T>(err: unknown, guard: (e: unknown) => e is T): T | undefined {
  if (guard(err)) return err;
  if (err instanceof JoinedError) {
    for (const inner of err.errors) {
      const found = findError(inner, guard);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (err instanceof Error && err.cause !== undefined) return findError(err.cause, guard);
  return undefined;
}
