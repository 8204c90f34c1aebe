import type { BuildContext } from './stage.js';

/** How often a stage may log the same failure: at most once per 10 seconds. */
export const FAILURE_LOG_INTERVAL_MS = 10_000;

/**
 * A debug log line for a failure that can hit every entry (a template that fails or goes over its
 * budget on each line): the first occurrence is logged at once, later ones are only counted until
 * the interval has passed on the stage's clock, and the next line carries `occurrences`, how many
 * happened since the previous line (itself included). One per built stage, so each stage speaks for
 * itself. Occurrences after the last line are told with the next one; no timer is kept for them.
 *
 * @example
 *   const failed = rateLimitedDebug(ctx, 'failed to execute template on extracted value');
 *   failed({ error: err.message }); // logs with occurrences: 1, then stays quiet for 10 s
 */
export function rateLimitedDebug(
  ctx: Pick<BuildContext, 'clock' | 'debug'>,
  message: string,
  intervalMs: number = FAILURE_LOG_INTERVAL_MS,
): (fields?: Record<string, unknown>) => void {
  const intervalNs = BigInt(intervalMs) * 1_000_000n;
  let loggedAtNs: bigint | undefined;
  let occurrences = 0;
  return (fields) => {
    occurrences++;
    const nowNs = ctx.clock.nowNs();
    if (loggedAtNs !== undefined && nowNs - loggedAtNs < intervalNs) return;
    ctx.debug(message, { ...fields, occurrences });
    loggedAtNs = nowNs;
    occurrences = 0;
  };
}
