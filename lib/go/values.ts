/**
 * Go-compatible value conversions shared by every stage: how the reference turns an extracted
 * value into text (`stringify`) or into a number (`toFloat`, metrics only), and the two
 * label-name validity schemes.
 */
import { parseGoDuration } from './duration.js';
import { formatFloat, parseGoFloatOrUndefined } from './strconv.js';
import { isWellFormed } from '../regex/well-formed.js';

/**
 * The text form of an extracted value, or `undefined` when the reference cannot convert it
 * (null, undefined, arrays, objects, functions…). Such keys count as unusable, never as "null".
 *
 * @example stringify(1e21) === '1000000000000000000000'; stringify(true) === 'true'; stringify(null) === undefined
 */
export function stringify(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return value;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return formatGoFloat(value);
    case 'bigint':
      return value.toString();
    default:
      return undefined;
  }
}

/**
 * Go's `strconv.FormatFloat(n, 'f', -1, 64)`: the shortest digits that read back as the same
 * float64, laid out positionally (never with an exponent).
 *
 * @example formatGoFloat(1e-7) === '0.0000001'; formatGoFloat(-0) === '-0'; formatGoFloat(Infinity) === '+Inf'
 */
export function formatGoFloat(n: number): string {
  return formatFloat(n, 'f', -1);
}

/**
 * The number the metrics stage reads from an extracted value: numbers as they are, booleans as
 * 1/0, strings as a Go float (`parseGoFloat`) or else a Go duration in seconds; anything else (and
 * strings that are neither) gives `undefined`.
 *
 * An out-of-range float string such as `1e400` gives `undefined`: the reference's ParseFloat
 * reports an error for it, the duration fallback fails too, and the metric update is skipped.
 *
 * @example toFloat('0x1p-2') === 0.25; toFloat('1.5ms') === 0.0015; toFloat(' 1') === undefined
 */
export function toFloat(value: unknown): number | undefined {
  switch (typeof value) {
    case 'number':
      return value;
    case 'bigint':
      return Number(value);
    case 'boolean':
      return value ? 1 : 0;
    case 'string': {
      const parsed = parseGoFloatOrUndefined(value);
      if (parsed !== undefined) return parsed;
      let ns: bigint;
      try {
        ns = parseGoDuration(value);
      } catch {
        return undefined;
      }
      return durationSeconds(ns);
    }
    default:
      return undefined;
  }
}

/** Go's `Duration.Seconds()`: whole seconds plus the nanosecond remainder, each as a float. */
function durationSeconds(ns: bigint): number {
  const seconds = ns / 1_000_000_000n;
  const nanos = ns % 1_000_000_000n;
  return Number(seconds) + Number(nanos) / 1e9;
}

/**
 * Label-name validity under the Prometheus UTF-8 scheme (the reference's default): any non-empty
 * name that is valid UTF-8, e.g. `k8s.io/app` or `1abc`.
 */
export function isValidLabelName(name: string): boolean {
  return name.length > 0 && isValidUtf8String(name);
}

/** Label-name validity under the legacy Prometheus scheme `[a-zA-Z_][a-zA-Z0-9_]*`. */
export function isLegacyLabelName(name: string): boolean {
  return /^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name);
}

/**
 * Whether the string encodes to valid UTF-8, i.e. holds no lone surrogate.
 *
 * U+FFFD is accepted on purpose: it is a valid character the reference accepts too, and text
 * decoded from bytes has already lost the distinction between a real U+FFFD and an invalid byte
 * sequence. Code that must reject invalid UTF-8 bytes has to check them before decoding.
 */
export function isValidUtf8String(s: string): boolean {
  // Lone surrogates are the only way a JS string can fail to be encodable as UTF-8.
  return isWellFormed(s);
}
