import { makeCapsule, type Capsule } from '../lib/config/evaluate.js';
import { decodeUtf8LikeGo } from '../lib/go/gostring.js';
import { MAX_TIMER_MS } from './clock.js';

/**
 * The shared vocabulary of profile components: what a profile is on its way through the graph,
 * the receiver interface `forward_to` lists hold, and the small Go-shaped helpers (label
 * builder, error chains, deadlines, query strings) that receivers and writers both need to
 * reproduce the reference byte for byte.
 */

/** One label of a profile. */
export interface Label {
  readonly name: string;
  readonly value: string;
}

/**
 * A label set, sorted by name. Built sets never repeat a name; a set handed to a writer directly
 * may, and the writer rejects it (the reference keeps such sets representable so it can say so).
 */
export type ProfileLabels = readonly Label[];

/** One raw profile of a push series: the bytes as the profiler sent them (usually gzipped pprof). */
export interface RawSample {
  readonly id: string;
  readonly rawProfile: Uint8Array;
}

/** The profiles of one label set, as one Push series carries them. */
export interface PushSeries {
  readonly labels: ProfileLabels;
  readonly samples: readonly RawSample[];
}

/**
 * A profile that arrived on the legacy ingest API. Nothing in it is parsed: the body and query
 * travel on exactly as received, and `labels` are what the `name` parameter yielded.
 */
export interface IngestProfile {
  /** The request body; shared between receivers, so never modified. */
  readonly body: Uint8Array;
  /** Every `Content-Type` header value of the request, in order (often one, possibly none). */
  readonly contentType: readonly string[];
  /** The request path (`/ingest`). */
  readonly path: string;
  /** The raw query string without `?`, exactly as received. */
  readonly rawQuery: string;
  readonly labels: ProfileLabels;
}

/**
 * Where profile components send profiles (the reference's Appender). Both calls resolve once the
 * profile is delivered and reject with the reason it was not. `signal` carries the caller's
 * cancellation and, when it has one, its deadline (see `deadlineOf`).
 */
export interface ProfilesReceiver {
  /** One series of a Push request; the writer sends it as its own Push. */
  append(series: PushSeries, signal: AbortSignal): Promise<void>;
  /** One ingest request, forwarded as it came. */
  appendIngest(profile: IngestProfile, signal: AbortSignal): Promise<void>;
}

export const PROFILES_RECEIVER = 'profiles.receiver';

/** Wraps a receiver as the opaque value a config exports (`profiles.write.default.receiver`). */
export function profilesReceiverCapsule(receiver: ProfilesReceiver): Capsule {
  return makeCapsule(PROFILES_RECEIVER, receiver);
}

const byName = (a: Label, b: Label) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * Builds a label set with the reference's label-builder rules: a later value for a name replaces
 * the earlier one, an empty value removes the label, and the result is sorted by name.
 *
 * @example buildLabels([{ name: 'b', value: '1' }, { name: 'a', value: '' }, { name: 'b', value: '2' }]) // [{ name: 'b', value: '2' }]
 */
export function buildLabels(pairs: Iterable<Label>): Label[] {
  // Most label sets arrive already built; copying them skips the map and the sort.
  if (Array.isArray(pairs) && isBuiltLabelSet(pairs)) return pairs.map(copyLabel);
  const values = new Map<string, string>();
  for (const { name, value } of pairs) {
    if (value === '') values.delete(name);
    else values.set(name, value);
  }
  return [...values].map(([name, value]) => ({ name, value })).sort(byName);
}

/** True when `labels` is what `buildLabels` would make of it: names strictly ascending, no empty value. */
export function isBuiltLabelSet(labels: readonly Label[]): boolean {
  for (let i = 0; i < labels.length; i++) {
    if (labels[i]!.value === '') return false;
    if (i > 0 && !(labels[i - 1]!.name < labels[i]!.name)) return false;
  }
  return true;
}

export function copyLabel(label: Label): Label {
  return { name: label.name, value: label.value };
}

/** Sorts a list of labels by name without merging repeated names. */
export function sortLabels(pairs: Iterable<Label>): Label[] {
  return [...pairs].sort(byName);
}

/** The value of the first label called `name`, or `''` (the reference's `Get`). */
export function labelValue(labels: ProfileLabels, name: string): string {
  return labels.find((l) => l.name === name)?.value ?? '';
}

export function hasLabel(labels: ProfileLabels, name: string): boolean {
  return labels.some((l) => l.name === name);
}

/** A label set as a plain object, for JSON output. */
export function labelsToObject(labels: ProfileLabels): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { name, value } of labels) out[name] = value;
  return out;
}

/** The label set of a plain object, built with `buildLabels`. */
export function labelsFromObject(labels: Readonly<Record<string, string>>): Label[] {
  return buildLabels(Object.entries(labels).map(([name, value]) => ({ name, value })));
}

// ---------------------------------------------------------------------------------------------
// Error chains. The reference answers clients from the shape of an error tree (is there a
// downstream status in it?), and its messages read `context: cause`, joined one per line.

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

/** A downstream answered with a non-200 status: the code and the start of its body. */
export class RemoteStatusError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: string,
  ) {
    super(`pyroscope write error: status=${statusCode} msg=${body}`);
    this.name = 'RemoteStatusError';
  }
}

/** The caller's deadline passed. */
export class DeadlineExceededError extends Error {
  constructor() {
    super('context deadline exceeded');
    this.name = 'DeadlineExceededError';
  }
}

/** The caller went away (client disconnected, component stopped). */
export class CanceledError extends Error {
  constructor() {
    super('context canceled');
    this.name = 'CanceledError';
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

// ---------------------------------------------------------------------------------------------
// Deadlines. An AbortSignal carries cancellation; the deadline it will fire at is recorded beside
// it so a writer can send the time left onward (Connect-Timeout-Ms) hop by hop.

const deadlines = new WeakMap<AbortSignal, number>();

/** A deadline-bound signal and the means to let go of its timer early. */
export interface ScopedDeadline {
  readonly signal: AbortSignal;
  /** Clears the timer and the link to the parent; the signal stays as it is. */
  release(): void;
}

/**
 * A signal that aborts with DeadlineExceededError at `deadlineMs` (epoch milliseconds) or with
 * `parent`'s reason when `parent` aborts first. Its deadline is the earlier of the two. Call
 * `release` when the work it bounds is over, so no timer or listener outlives it.
 */
export function scopedDeadline(deadlineMs: number, parent?: AbortSignal): ScopedDeadline {
  const inherited = parent ? deadlineOf(parent) : undefined;
  const effective = inherited !== undefined ? Math.min(inherited, deadlineMs) : deadlineMs;
  const controller = new AbortController();
  deadlines.set(controller.signal, effective);
  let timer: NodeJS.Timeout | undefined;
  const onParentAbort = () => controller.abort(parent!.reason);
  const release = () => {
    if (timer !== undefined) clearTimeout(timer);
    parent?.removeEventListener('abort', onParentAbort);
  };
  if (parent?.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, release };
  }
  const left = effective - Date.now();
  if (left <= 0) {
    controller.abort(new DeadlineExceededError());
    return { signal: controller.signal, release };
  }
  const fire = () => {
    release();
    controller.abort(new DeadlineExceededError());
  };
  // Node cuts a delay past MAX_TIMER_MS down to 1 ms (with a TimeoutOverflowWarning), which would
  // fire a deadline days away at once: a far deadline waits in steps and re-arms until it is due.
  const arm = (ms: number) => {
    timer = ms > MAX_TIMER_MS ? setTimeout(() => arm(effective - Date.now()), MAX_TIMER_MS) : setTimeout(fire, ms);
    // A pending deadline must not keep a process alive on its own.
    timer.unref?.();
  };
  arm(left);
  parent?.addEventListener('abort', onParentAbort, { once: true });
  controller.signal.addEventListener('abort', release, { once: true });
  return { signal: controller.signal, release };
}

/** The deadline (epoch milliseconds) a signal made by `scopedDeadline` fires at. */
export function deadlineOf(signal: AbortSignal): number | undefined {
  return deadlines.get(signal);
}

// ---------------------------------------------------------------------------------------------
// Query strings as the reference's URL library reads and writes them.

const MALFORMED_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

/** Decodes one query component: `+` is a space; a malformed `%` escape makes it undefined. */
function unescapeQueryComponent(s: string): string | undefined {
  if (!s.includes('%')) return s.includes('+') ? s.replaceAll('+', ' ') : s;
  if (MALFORMED_ESCAPE.test(s)) return undefined;
  const spaced = s.replaceAll('+', ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    // Escapes that do not form valid UTF-8: the reference keeps the raw bytes (a Go string holds
    // any bytes), so a label value with them fails the writer's UTF-8 check and other parameters
    // are forwarded with the same escapes. A JavaScript string cannot hold a stray byte: each
    // becomes a lone low surrogate U+DC80–U+DCFF (invalid UTF-8 to every check here, and written
    // back as the same `%XX` by escapeQueryComponent).
    const bytes: number[] = [];
    for (let i = 0; i < spaced.length; i++) {
      if (spaced[i] === '%') {
        bytes.push(parseInt(spaced.slice(i + 1, i + 3), 16));
        i += 2;
      } else {
        for (const b of Buffer.from(spaced[i]!, 'utf8')) bytes.push(b);
      }
    }
    return decodeUtf8LikeGo(bytes, strayByte);
  }
}

/** The first value of `key` in a raw query, read as `parseQuery` reads it (`''` when absent). */
export function firstQueryValue(rawQuery: string, key: string): string {
  for (const part of rawQuery.split('&')) {
    if (part === '' || part.includes(';')) continue;
    const eq = part.indexOf('=');
    const k = unescapeQueryComponent(eq < 0 ? part : part.slice(0, eq));
    if (k !== key) continue;
    const value = unescapeQueryComponent(eq < 0 ? '' : part.slice(eq + 1));
    if (value !== undefined) return value;
  }
  return '';
}

/**
 * Parses a raw query into its values per key, in order. Pairs with a semicolon in the key or
 * a malformed escape are skipped, as the reference's parser skips them.
 */
export function parseQuery(rawQuery: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of rawQuery.split('&')) {
    if (part === '' || part.includes(';')) continue;
    const eq = part.indexOf('=');
    const key = unescapeQueryComponent(eq < 0 ? part : part.slice(0, eq));
    const value = unescapeQueryComponent(eq < 0 ? '' : part.slice(eq + 1));
    if (key === undefined || value === undefined) continue;
    const list = out.get(key);
    if (list) list.push(value);
    else out.set(key, [value]);
  }
  return out;
}

const UNRESERVED = /[A-Za-z0-9\-_.~]/;

/** A stray byte (0x80–0xFF) of an undecodable escape, kept as a lone low surrogate. */
function strayByte(b: number): string {
  return String.fromCharCode(0xdc00 + b);
}

/** Escapes a query component: unreserved characters stay, spaces become `+`, the rest `%XX`. */
export function escapeQueryComponent(s: string): string {
  let out = '';
  for (const ch of s) {
    const code = ch.charCodeAt(0);
    if (UNRESERVED.test(ch)) out += ch;
    else if (ch === ' ') out += '+';
    else if (ch.length === 1 && code >= 0xdc80 && code <= 0xdcff) out += `%${(code - 0xdc00).toString(16).toUpperCase()}`;
    else for (const b of Buffer.from(ch, 'utf8')) out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** Encodes values per key as the reference does: keys sorted, each value in order. */
export function encodeQuery(values: ReadonlyMap<string, readonly string[]>): string {
  const keys = [...values.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const parts: string[] = [];
  for (const key of keys) {
    for (const value of values.get(key)!) parts.push(`${escapeQueryComponent(key)}=${escapeQueryComponent(value)}`);
  }
  return parts.join('&');
}
