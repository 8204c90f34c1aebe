import { didYouMean } from '../lib/suggest.js';

/**
 * A small argv parser: positional arguments plus `--flag value`, `--flag=value`, boolean flags
 * and repeatable flags (`--stages a.ts --stages b.ts`).
 */
export interface ParsedArgs {
  readonly positional: string[];
  readonly flags: Map<string, string | true>;
  /** Every value of each repeatable flag, in order (an empty list when not given). */
  readonly lists: Map<string, string[]>;
}

export class UsageError extends Error {}

export function parseArgs(
  argv: readonly string[],
  booleanFlags: readonly string[],
  valueFlags: readonly string[],
  listFlags: readonly string[] = [],
): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  const lists = new Map<string, string[]>(listFlags.map((name) => [name, []]));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--') || arg === '--') {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (booleanFlags.includes(name)) {
      if (eq !== -1) throw new UsageError(`flag --${name} takes no value`);
      flags.set(name, true);
    } else if (valueFlags.includes(name) || listFlags.includes(name)) {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined) throw new UsageError(`flag --${name} needs a value`);
      if (listFlags.includes(name)) lists.get(name)!.push(value);
      else flags.set(name, value);
    } else {
      throw new UsageError(`unknown flag --${name}${didYouMean(name, [...booleanFlags, ...valueFlags, ...listFlags], (s) => `--${s}`)}`);
    }
  }
  return { positional, flags, lists };
}
