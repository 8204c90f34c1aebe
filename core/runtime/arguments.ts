import { isCapsule } from '../../lib/config/evaluate.js';
import type { BlockSpec } from '../../lib/config/schema.js';
import { formatGoDuration } from '../../lib/go/duration.js';
import { isSecretHeader, REDACTED, redactText, urlCredentials } from '../../lib/redact.js';

/** Attribute names whose values are credentials: passwords, tokens, keys, secrets. */
const SECRET_NAME = /passw|secret|token|credential|key|auth|cookie/i;

/**
 * A component's decoded arguments as JSON for the run server's page, with every secret hidden:
 * values of attributes named like a credential, of secret headers, and URL credentials read
 * `xxxxx`, and any of those secrets quoted elsewhere in the arguments is hidden too. Durations are
 * shown as Go durations, receivers as `<receiver>`.
 */
export function redactedArguments(values: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return show(values, argumentSecrets(values), 0) as Record<string, unknown>;
}

/** The secret values among a component's arguments, for hiding them in what else it shows (its health message). */
export function argumentSecrets(values: Readonly<Record<string, unknown>>): string[] {
  const secrets: string[] = [];
  collectSecrets(values, secrets);
  return secrets;
}

function collectSecrets(value: unknown, out: string[], depth = 0): void {
  if (depth > 8 || value === null || typeof value !== 'object' || isCapsule(value)) return;
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v === 'string' && v !== '' && (SECRET_NAME.test(name) || isSecretHeader(name))) out.push(v);
    else if (typeof v === 'string') out.push(...urlCredentials(v));
    else collectSecrets(v, out, depth + 1);
  }
}

function show(value: unknown, secrets: readonly string[], depth: number, name = ''): unknown {
  if (typeof value === 'string') {
    if (value !== '' && name !== '' && (SECRET_NAME.test(name) || isSecretHeader(name))) return REDACTED;
    return redactText(value, secrets);
  }
  if (typeof value === 'bigint') return formatGoDuration(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return value ?? null;
  if (typeof value !== 'object' || depth > 8) return null;
  if (isCapsule(value)) return `<${value.capsule}>`;
  if (Array.isArray(value)) return value.map((v) => show(v, secrets, depth + 1));
  // Host values (receivers, compiled stages) are shown by what they are, not their insides.
  const fields = Object.values(value as Record<string, unknown>);
  if (fields.some((v) => typeof v === 'function'))
    return typeof (value as { send?: unknown }).send === 'function' ? '<receiver>' : '<value>';
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return '<value>';
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    out[key] = show(v, secrets, depth + 1, key);
  }
  return out;
}

/**
 * A component's decoded values with the durations its schema decodes to milliseconds
 * (`t.durationMs`) turned back into nanoseconds, the form every other duration has, so the run
 * server's page shows them as Go durations (`10s`) rather than bare numbers.
 */
export function durationsAsNanoseconds(spec: BlockSpec, values: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...values };
  for (const [name, field] of Object.entries(spec.fields)) {
    const v = out[name];
    if (field.kind.type === 'duration' && field.kind.unit === 'ms' && typeof v === 'number' && Number.isFinite(v))
      out[name] = BigInt(Math.round(v * 1e6));
  }
  for (const [name, nested] of Object.entries(spec.blocks ?? {})) {
    const key = nested.key ?? name;
    const v = out[key];
    const each = (block: unknown) =>
      block !== null && typeof block === 'object' && !Array.isArray(block)
        ? durationsAsNanoseconds(nested, block as Record<string, unknown>)
        : block;
    if (Array.isArray(v)) out[key] = v.map(each);
    else if (v !== undefined) out[key] = each(v);
  }
  return out;
}
