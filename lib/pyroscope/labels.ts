/**
 * The label set of a profile as the reference's model keeps it: name/value pairs sorted by name,
 * built with the label builder's rules (a later value replaces an earlier one, an empty value
 * removes the label). Receivers build sets with it and writers check and print them.
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
