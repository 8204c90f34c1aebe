/** A value as shown in tables: strings quoted only when they would be ambiguous. */
export function showValue(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value === '' || /^\s|\s$/.test(value) ? JSON.stringify(value) : value;
  return JSON.stringify(value);
}

/** A virtual-clock offset: `+0 ms`, `+120 ms`, `+3.003 s`. */
export function formatOffset(ms: number): string {
  if (Math.abs(ms) < 1000) return `+${Math.round(ms * 1000) / 1000} ms`;
  return `+${(ms / 1000).toFixed(3).replace(/\.?0+$/, '')} s`;
}
