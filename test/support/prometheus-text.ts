/** Parses Prometheus text exposition into samples, for comparing metrics by value. */
export interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) throw new Error(`unparseable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[3]) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
      for (let lm = re.exec(m[3]); lm; lm = re.exec(m[3])) {
        labels[lm[1]!] = lm[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
      }
    }
    const v = m[4]!;
    samples.push({ name: m[1]!, labels, value: v === '+Inf' ? Infinity : v === '-Inf' ? -Infinity : Number(v) });
  }
  return samples;
}

/** Family names declared by `# TYPE` lines, with the sample names that belong to each. */
export function familiesOf(text: string): Map<string, string> {
  const families = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^# TYPE (\S+) (\S+)/.exec(line.trim());
    if (m) families.set(m[1]!, m[2]!);
  }
  return families;
}

export function sampleKey(sample: Sample): string {
  const names = Object.keys(sample.labels).sort();
  return `${sample.name}{${names.map((n) => `${n}=${JSON.stringify(sample.labels[n])}`).join(',')}}`;
}

/** The samples of `text` belonging to the named families (a family includes _bucket/_sum/_count). */
export function samplesOfFamilies(text: string, families: Iterable<string>): Map<string, number> {
  const wanted = [...families];
  const out = new Map<string, number>();
  for (const sample of parsePrometheusText(text)) {
    const family = wanted.find(
      (f) =>
        sample.name === f ||
        sample.name === `${f}_bucket` ||
        sample.name === `${f}_sum` ||
        sample.name === `${f}_count` ||
        sample.name === `${f}_total`,
    );
    if (family) out.set(sampleKey(sample), sample.value);
  }
  return out;
}
