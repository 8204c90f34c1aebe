/**
 * Generates `tzdata.ts`: for every zone name of a compiled IANA database (TZif files), the list
 * of zone abbreviations with their offsets, plus — for offsets that carried different
 * abbreviations over time — when each abbreviation took over.
 *
 * Offsets themselves come from temporal-polyfill at run time; this table only adds what
 * Temporal cannot tell: the abbreviations Go prints for `MST` and matches when parsing one.
 *
 * Run: `npx tsx scripts/generate-tzdata.ts <zoneinfo directory> > lib/time/zones/tzdata.ts`
 * with the system's compiled zoneinfo directory (where Go's LoadLocation reads zones on Linux).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Temporal } from 'temporal-polyfill';

interface ZoneType {
  readonly abbr: string;
  readonly offset: number;
  readonly isDst: boolean;
}

interface Transition {
  readonly when: number;
  readonly index: number;
}

interface TzFile {
  readonly types: ZoneType[];
  readonly transitions: Transition[];
  readonly footer: string;
}

function readTzif(bytes: Buffer): TzFile | undefined {
  if (bytes.length < 44 || bytes.toString('latin1', 0, 4) !== 'TZif') return undefined;
  const version = bytes[4];
  const counts = (at: number) => {
    const c = (i: number) => bytes.readUInt32BE(at + 20 + i * 4);
    return { isut: c(0), isstd: c(1), leap: c(2), time: c(3), type: c(4), chars: c(5) };
  };
  let at = 0;
  let timeSize = 4;
  let c = counts(0);
  if (version !== 0) {
    // Version 2+ files repeat the data with 64-bit times after the 32-bit block; Go reads those.
    at = 44 + c.time * 4 + c.time + c.type * 6 + c.chars + c.leap * 8 + c.isstd + c.isut;
    c = counts(at);
    timeSize = 8;
  }
  let p = at + 44;
  const times: number[] = [];
  for (let i = 0; i < c.time; i++) {
    times.push(timeSize === 8 ? Number(bytes.readBigInt64BE(p)) : bytes.readInt32BE(p));
    p += timeSize;
  }
  const indices: number[] = [];
  for (let i = 0; i < c.time; i++) indices.push(bytes[p++]!);
  const rawTypes: { offset: number; isDst: boolean; abbrIndex: number }[] = [];
  for (let i = 0; i < c.type; i++) {
    rawTypes.push({ offset: bytes.readInt32BE(p), isDst: bytes[p + 4] !== 0, abbrIndex: bytes[p + 5]! });
    p += 6;
  }
  const chars = bytes.toString('latin1', p, p + c.chars);
  p += c.chars + c.leap * (timeSize + 4) + c.isstd + c.isut;
  const types = rawTypes.map((t) => {
    const end = chars.indexOf('\0', t.abbrIndex);
    return { abbr: chars.slice(t.abbrIndex, end < 0 ? undefined : end), offset: t.offset, isDst: t.isDst };
  });
  let footer = '';
  if (version !== 0 && bytes[p] === 0x0a) {
    const end = bytes.indexOf(0x0a, p + 1);
    if (end > p) footer = bytes.toString('latin1', p + 1, end);
  }
  const transitions = times.map((when, i) => ({ when, index: indices[i]! }));
  return { types, transitions, footer };
}

/** Which zone type applies before the first transition, by Go's lookupFirstZone rules. */
function firstZoneIndex(file: TzFile): number {
  const { types, transitions } = file;
  if (!transitions.some((t) => t.index === 0)) return 0;
  if (transitions.length > 0 && types[transitions[0]!.index]!.isDst) {
    for (let zi = transitions[0]!.index - 1; zi >= 0; zi--) if (!types[zi]!.isDst) return zi;
  }
  const std = types.findIndex((t) => !t.isDst);
  return std >= 0 ? std : 0;
}

/** Standard and daylight names and offsets of a POSIX TZ rule string (`EST5EDT,M3.2.0,M11.1.0`). */
function footerZones(footer: string): ZoneType[] {
  let s = footer;
  const name = (): string | undefined => {
    if (s.startsWith('<')) {
      const end = s.indexOf('>');
      if (end < 0) return undefined;
      const n = s.slice(1, end);
      s = s.slice(end + 1);
      return n;
    }
    const m = /^[A-Za-z]{3,}/.exec(s);
    if (!m) return undefined;
    s = s.slice(m[0].length);
    return m[0];
  };
  const offset = (): number | undefined => {
    const m = /^([+-]?)(\d{1,3})(?::(\d{1,2}))?(?::(\d{1,2}))?/.exec(s);
    if (!m) return undefined;
    s = s.slice(m[0].length);
    const secs = Number(m[2]) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0);
    // POSIX offsets count west of UTC; Go's (and ours) count east.
    return m[1] === '-' ? secs : -secs;
  };
  const stdName = name();
  if (stdName === undefined) return [];
  const stdOffset = offset();
  if (stdOffset === undefined) return [];
  const zones: ZoneType[] = [{ abbr: stdName, offset: stdOffset, isDst: false }];
  if (s.length === 0 || s.startsWith(',')) return zones;
  const dstName = name();
  if (dstName === undefined) return zones;
  const dstOffset = s.length > 0 && !s.startsWith(',') ? offset() : stdOffset + 3600;
  zones.push({ abbr: dstName, offset: dstOffset ?? stdOffset + 3600, isDst: true });
  return zones;
}

/**
 * One record: `ABBR:offset,...` in the file's type order (Go's zone list), then, for each offset
 * that had several abbreviations, `;offset=ABBR@since/ABBR@since` (`since` empty = always).
 */
function encode(file: TzFile): string {
  const types = file.types;
  const timeline: { when: number; zone: ZoneType }[] = [];
  const transitions = file.transitions;
  if (types.length > 0) timeline.push({ when: -Infinity, zone: types[firstZoneIndex(file)]! });
  for (const t of transitions) timeline.push({ when: t.when, zone: types[t.index]! });
  if (file.footer !== '') {
    const lastWhen = transitions.length > 0 ? transitions[transitions.length - 1]!.when : -Infinity;
    for (const zone of footerZones(file.footer)) timeline.push({ when: lastWhen, zone });
  }
  const byOffset = new Map<number, { when: number; abbr: string }[]>();
  for (const { when, zone } of timeline) {
    const eras = byOffset.get(zone.offset) ?? [];
    if (eras.length === 0 || eras[eras.length - 1]!.abbr !== zone.abbr) eras.push({ when, abbr: zone.abbr });
    byOffset.set(zone.offset, eras);
  }
  const zonePart = types.map((t) => `${t.abbr}:${t.offset}`).join(',');
  const eraParts: string[] = [];
  for (const [offset, eras] of [...byOffset].sort((a, b) => a[0] - b[0])) {
    const names = new Set(eras.map((e) => e.abbr));
    const onlyName = types.filter((t) => t.offset === offset).map((t) => t.abbr);
    if (names.size === 1 && onlyName.every((n) => names.has(n))) continue;
    const list = eras.map((e) => `${e.abbr}@${e.when === -Infinity ? '' : e.when}`).join('/');
    eraParts.push(`${offset}=${list}`);
  }
  return [zonePart, ...eraParts].join(';');
}

function isTemporalZone(name: string): boolean {
  try {
    Temporal.Now.zonedDateTimeISO(name);
    return true;
  } catch {
    return false;
  }
}

function* zoneFiles(root: string, dir = root): Generator<string> {
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    const rel = relative(root, path);
    if (rel === 'posix' || rel === 'right' || rel === 'posixrules' || rel === 'localtime') continue;
    const st = statSync(path);
    if (st.isDirectory()) yield* zoneFiles(root, path);
    else if (st.isFile()) yield rel;
  }
}

function main(): void {
  const root = process.argv[2];
  if (root === undefined) {
    process.stderr.write('usage: generate-tzdata.ts <zoneinfo directory>\n');
    process.exit(2);
  }
  const records: string[] = [];
  const recordIndex = new Map<string, number>();
  const names: [string, number][] = [];
  let version = '';
  try {
    version = /# version (\S+)/.exec(readFileSync(join(root, 'tzdata.zi'), 'latin1'))?.[1] ?? '';
  } catch {
    // The version line is informational only.
  }
  for (const rel of zoneFiles(root)) {
    const name = rel.split('\\').join('/');
    const file = readTzif(readFileSync(join(root, rel)));
    if (file === undefined || !isTemporalZone(name)) continue;
    const record = encode(file);
    let index = recordIndex.get(record);
    if (index === undefined) {
      index = records.length;
      records.push(record);
      recordIndex.set(record, index);
    }
    names.push([name, index]);
  }
  const out: string[] = [];
  out.push('// Generated by scripts/generate-tzdata.ts from the IANA time zone database; do not edit.');
  out.push(`// Source tzdata version: ${version || 'unknown'}.`);
  out.push('');
  out.push('/** Encoded zone records; see scripts/generate-tzdata.ts for the format. */');
  out.push('export const ZONE_RECORDS: readonly string[] = [');
  for (const r of records) out.push(`  ${JSON.stringify(r)},`);
  out.push('];');
  out.push('');
  out.push('/** Zone name (case-sensitive, as Go loads it) → index into ZONE_RECORDS. */');
  out.push('export const ZONE_NAMES: Readonly<Record<string, number>> = {');
  for (const [name, index] of names) out.push(`  ${JSON.stringify(name)}: ${index},`);
  out.push('};');
  process.stdout.write(out.join('\n') + '\n');
}

main();
