/**
 * Label rules the receiver applies on both endpoints before forwarding, and the text form its
 * error messages print label sets in.
 */
import { buildLabels, copyLabel, isBuiltLabelSet, type Label, type ProfileLabels } from '../../lib/pyroscope/labels.js';
import { quoteGoString } from '../../lib/go/gostring.js';
import { isLegacyLabelName } from '../../lib/go/values.js';

/**
 * The reference's service-name rule: without `service_name`, it takes the value of `__name__`;
 * with one, `app_name` takes the value of `__name__`. Builder semantics apply, so a missing
 * `__name__` (an empty value) adds nothing and even removes an existing `app_name`, and
 * empty-valued labels of the input disappear. `__name__` itself stays.
 *
 * @example ensureServiceName([{ name: '__name__', value: 'app' }]) // __name__=app, service_name=app
 */
export function ensureServiceName(labels: ProfileLabels): Label[] {
  // One pass for the first `__name__` value and whether `service_name` is there: this runs for
  // every profile received.
  let name: string | undefined;
  let hasServiceName = false;
  for (const label of labels) {
    if (label.name === '__name__') name ??= label.value;
    else if (label.name === 'service_name') hasServiceName = true;
  }
  return withServiceName(labels, name ?? '', hasServiceName ? 'app_name' : 'service_name');
}

/** `labels` with `target` set to `name` (removed when empty), under the label-builder rules. */
function withServiceName(labels: ProfileLabels, name: string, target: string): Label[] {
  if (!isBuiltLabelSet(labels)) return buildLabels([...labels, { name: target, value: name }]);
  // A built set (the usual case) only needs `target` set, or removed when the value is empty.
  const out: Label[] = [];
  let placed = name === '';
  for (const label of labels) {
    if (label.name === target) continue;
    if (!placed && label.name > target) {
      out.push({ name: target, value: name });
      placed = true;
    }
    out.push(copyLabel(label));
  }
  if (!placed) out.push({ name: target, value: name });
  return out;
}

/**
 * A label set as the reference prints one: `{app="app-0", env="prod"}`. Names outside the
 * legacy `[a-zA-Z_][a-zA-Z0-9_]*` form are quoted too.
 */
export function formatLabels(labels: ProfileLabels): string {
  const parts = labels.map((l) => `${isLegacyLabelName(l.name) ? l.name : quoteGoString(l.name)}=${quoteGoString(l.value)}`);
  return `{${parts.join(', ')}}`;
}
