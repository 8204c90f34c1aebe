/**
 * The execution budget of one render. Go's executor has none, so one template such as
 * `{{ repeat 200000000 "a" }}` or two nested `{{ range until 10000 }}` would hold the event loop
 * for seconds and take gigabytes; here every render is metered and fails, as an execution error,
 * as soon as it goes over.
 *
 * Sizes are checked before anything is allocated: the functions that can build large values
 * (`repeat`, `indent`, `until`, `seq`, `concat`, `split`, `join`, …) work out the size of their
 * result from their arguments first; every other function's result is checked when it returns,
 * and each call is charged for the characters and elements it handles, so repeated growth (a
 * string doubled in a loop) stops early.
 *
 * Steps bound the work, not the time: one call of `bcrypt`, `derivePassword` or `genPrivateKey`
 * takes a tenth of a second to seconds. So a render also has a wall-time limit, read from an
 * injected clock: checked every few steps and after every function call, inside bcrypt's rounds,
 * and before a call that cannot be interrupted (a key generation, scrypt), which must fit in the
 * time left as far as its previous calls in the same template tell.
 *
 * Rendering is synchronous, so the meter of the render in progress is kept here for the
 * functions to find; outside a render the functions see the default size limits and no step or
 * time limit.
 */
import { formatGoDuration } from '../go/duration.js';
import { GoError, type BudgetLimit } from './errors.js';

/** What one render may spend. */
export interface ExecutionBudget {
  /**
   * Units of work: a node walked, a range iteration, a function call, a list element a function
   * builds, 32 characters of the strings a function takes or returns (and the comparisons of
   * `uniq`/`without`, which are quadratic).
   */
  readonly maxSteps: number;
  /** UTF-8 bytes the render may write, and the largest string a function may return. */
  readonly maxOutputBytes: number;
  /** Elements a function may put in one list (`until`, `untilStep`, `split`, `concat`, …). */
  readonly maxListLength: number;
  /** Milliseconds of wall time one render may take. */
  readonly maxDuration: number;
}

/** What a call given the time left returns when that time ran out before its work was done. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/** Milliseconds on a monotonic clock: what a render's time is read from (injectable for tests). */
export type RenderClock = () => number;

/**
 * The default render clock: real time on purpose, since the budget bounds the work a render really
 * does, which a virtual clock (standing still through a synchronous render) would never see.
 */
export const monotonicClock: RenderClock = () => performance.now();

/**
 * How long each kind of uninterruptible call took last, in milliseconds, by the clock that timed
 * it: kept across renders and templates, so a call that took longer than a render has left is not
 * started again (a fake clock's durations stay with it). A duration is forgotten after a minute,
 * so a call refused while the machine was busy is tried again once in a while.
 */
const callDurationsByClock = new WeakMap<RenderClock, Map<string, { readonly ms: number; readonly at: number }>>();
const CALL_DURATION_KEPT_MS = 60_000;

function lastDuration(clock: RenderClock, kind: string, now: number): number {
  const last = callDurationsByClock.get(clock)?.get(kind);
  return last !== undefined && now - last.at < CALL_DURATION_KEPT_MS ? last.ms : 0;
}

function recordDuration(clock: RenderClock, kind: string, ms: number, at: number): void {
  let durations = callDurationsByClock.get(clock);
  if (durations === undefined) callDurationsByClock.set(clock, (durations = new Map()));
  durations.set(kind, { ms, at });
}

/**
 * The defaults: 1,000,000 steps (a few hundred milliseconds at most), 16 MiB of output or of any
 * one string, 1,000,000 list elements (a list that long also takes all the steps), 1 s of wall
 * time. Templates that transform log lines use a tiny fraction of each.
 */
export const DEFAULT_EXECUTION_BUDGET: ExecutionBudget = Object.freeze({
  maxSteps: 1_000_000,
  maxOutputBytes: 16 * 1024 * 1024,
  maxListLength: 1_000_000,
  maxDuration: 1000,
});

/** Characters of string arguments and results that count as one step of a function call. */
const CHARS_PER_STEP = 32;
/** Steps between two readings of the clock while no function is called. */
const STEPS_PER_TIME_CHECK = 128;

/** A budget limit hit inside a template function; the executor reports it with its position. */
export class BudgetExceededError extends GoError {
  constructor(
    detail: string,
    readonly limit: BudgetLimit = 'size',
  ) {
    super(`execution budget exceeded: ${detail}`);
    this.name = 'BudgetExceededError';
  }
}

/** What one render has spent so far, against its budget. */
export class BudgetMeter {
  private steps = 0;
  private nextTimeCheck = STEPS_PER_TIME_CHECK;
  /** Strings at most this long (in UTF-16 code units) are within the byte limit whatever they hold. */
  private readonly surelySmall: number;
  private readonly deadline: number;

  constructor(
    readonly budget: ExecutionBudget,
    private readonly now: RenderClock = monotonicClock,
    startedAt?: number,
  ) {
    this.surelySmall = Math.floor(budget.maxOutputBytes / 3);
    this.deadline = Number.isFinite(budget.maxDuration) ? (startedAt ?? now()) + budget.maxDuration : Number.POSITIVE_INFINITY;
  }

  /** Counts `n` steps. */
  spend(n = 1): void {
    this.steps += n;
    if (this.steps > this.budget.maxSteps) this.outOfSteps();
    if (this.steps >= this.nextTimeCheck) {
      this.nextTimeCheck = this.steps + STEPS_PER_TIME_CHECK;
      this.checkTime();
    }
  }

  /** Fails the render once it has taken longer than its budget, or would within `ms` more. */
  checkTime(ms = 0): void {
    if (this.deadline !== Number.POSITIVE_INFINITY && this.now() + ms > this.deadline) this.outOfTime(ms > 0);
  }

  /**
   * Runs a call that cannot be interrupted (a key generation, scrypt): not at all when the last
   * call of the same `kind` took longer than the time left, else to its end, the time checked
   * after it. The call is told the milliseconds left (`Infinity` without a time limit); one that
   * gives up waiting for work done elsewhere returns TIMED_OUT and fails the render, and the next
   * call of its kind is taken to need at least the time it waited.
   */
  uninterruptible<T>(kind: string, call: (msLeft: number) => T | typeof TIMED_OUT): T {
    if (this.deadline === Number.POSITIVE_INFINITY) return this.unlessTimedOut(call(Number.POSITIVE_INFINITY));
    const started = this.now();
    const expected = lastDuration(this.now, kind, started);
    if (started + expected > this.deadline) this.outOfTime(expected > 0);
    const result = call(this.deadline - started);
    const finished = this.now();
    recordDuration(this.now, kind, result === TIMED_OUT ? Math.max(finished, this.deadline) - started : finished - started, finished);
    if (result === TIMED_OUT || finished > this.deadline) this.outOfTime();
    return result;
  }

  private unlessTimedOut<T>(result: T | typeof TIMED_OUT): T {
    if (result === TIMED_OUT) this.outOfTime();
    return result;
  }

  /** Checks a string about to be built from its size in bytes (before it is built). */
  checkBytes(bytes: number): void {
    if (bytes > this.budget.maxOutputBytes) {
      throw new BudgetExceededError(`a string of ${bytes} bytes (at most ${this.budget.maxOutputBytes})`);
    }
    if (this.steps + bytes / CHARS_PER_STEP > this.budget.maxSteps) this.outOfSteps();
  }

  /**
   * Checks a list about to be built from its length (before it is built): it must fit the length
   * limit and the steps left, which it is charged when the function returns it.
   */
  checkLength(length: number | undefined): void {
    const max = this.budget.maxListLength;
    if (length === undefined) throw new BudgetExceededError(`a list of more than ${max} elements`);
    if (length > max) throw new BudgetExceededError(`a list of ${length} elements (at most ${max})`);
    if (this.steps + length > this.budget.maxSteps) this.outOfSteps();
  }

  /**
   * Charges a function call: one step, one per 32 characters of its string arguments and result,
   * one per element of a list it returns; and checks the result against the size limits.
   */
  chargeCall(args: readonly unknown[], result: unknown): void {
    let chars = 0;
    for (let i = 0; i < args.length; i++) {
      const arg = args[i];
      if (typeof arg === 'string') chars += arg.length;
    }
    let elements = 0;
    if (typeof result === 'string') {
      chars += result.length;
      if (result.length > this.surelySmall) this.checkBytes(utf8Length(result));
    } else if (Array.isArray(result)) {
      elements = result.length;
      if (elements > this.budget.maxListLength) this.checkLength(elements);
    }
    this.spend(1 + elements + Math.floor(chars / CHARS_PER_STEP));
    // One call can take long where walking cannot: the clock is read after every one.
    this.checkTime();
  }

  /** Whether text of `units` UTF-16 code units may exceed the byte limit (a quick pre-check). */
  mayExceedBytes(units: number): boolean {
    return units > this.surelySmall;
  }

  private outOfSteps(): never {
    throw new BudgetExceededError(`more than ${this.budget.maxSteps} steps`, 'steps');
  }

  private outOfTime(ahead = false): never {
    const limit = formatGoDuration(BigInt(Math.round(this.budget.maxDuration * 1e6)));
    throw new BudgetExceededError(`render ${ahead ? 'would take' : 'took'} more than ${limit}`, 'time');
  }
}

/** Outside a render: the default sizes, no step or time limit. */
const unmetered = new BudgetMeter({
  ...DEFAULT_EXECUTION_BUDGET,
  maxSteps: Number.POSITIVE_INFINITY,
  maxDuration: Number.POSITIVE_INFINITY,
});
let active: BudgetMeter | undefined;

/** The meter of the render in progress (template functions charge it). */
export function currentMeter(): BudgetMeter {
  return active ?? unmetered;
}

/** Runs `render` with `meter` as the current meter. */
export function withMeter<T>(meter: BudgetMeter, render: () => T): T {
  const outer = active;
  active = meter;
  try {
    return render();
  } finally {
    active = outer;
  }
}

/** The UTF-8 length of `s` from code unit `from` on (a lone surrogate counts as the 3 bytes of U+FFFD). */
export function utf8Length(s: string, from = 0): number {
  let bytes = 0;
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
