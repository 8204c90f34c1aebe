import { formatFloat } from './go/strconv.js';

/**
 * prom-client's text exposition as the reference's Go client writes it: a family with no sample
 * is left out (Go drops an empty vector; prom-client writes its HELP and TYPE), and sample values
 * are written by Go's rule, `strconv.FormatFloat(v, 'g', -1, 64)` with `NaN`, `+Inf` and `-Inf`
 * (prom-client writes `1500000`, `0.00001` and `Nan` where Go writes `1.5e+06`, `1e-05` and `NaN`).
 * Families stay in prom-client's order, each followed by a blank line.
 */
export function goExposition(text: string): string {
  let out = '';
  let header = '';
  let samples = '';
  const endFamily = () => {
    if (samples !== '') out += `${header}${samples}\n`;
    header = '';
    samples = '';
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# HELP ')) {
      endFamily();
      header = `${line}\n`;
    } else if (line.startsWith('#')) header += `${line}\n`;
    else samples += `${withGoValue(line)}\n`;
  }
  endFamily();
  return out;
}

/** A sample line (`name{labels} value`; no timestamp) with its value in Go's form. */
function withGoValue(line: string): string {
  const space = line.lastIndexOf(' ');
  return line.slice(0, space + 1) + goSampleValue(line.slice(space + 1));
}

function goSampleValue(text: string): string {
  if (text === 'Nan' || text === 'NaN') return 'NaN';
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) return text;
  return formatFloat(value, 'g', -1);
}
