/**
 * Extraction stages (regex, pattern, hostevent, eventlogmessage, geoip) on realistic generated
 * input, each beside a baseline measured in the same run, and the "web access logs" pipeline:
 * regex (Apache/nginx combined format) → geoip (a generated city database) → labels.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reader } from 'maxmind';
import { Registry } from 'prom-client';
import { Subject } from 'rxjs';
import { ManualClock } from '../core/clock.js';
import type { Entry } from '../core/entry.js';
import { buildPipeline, ingress } from '../core/pipeline.js';
import type { StageSpec } from '../core/stage.js';
import { eventLogMessage, geoip, hostEvent, labels, pattern, regex } from '../operators/index.js';
import { mmdb, writeMmdb, type MmdbNetwork } from '../playground/samples/mmdb-writer.js';
import { calibrate, compared, peakRssMiB, rate, scaled, type Timed } from './harness.js';
import type { BenchRow } from './types.js';

/** Target duration of one timed repeat; `rate` keeps the best of three. */

const COMBINED =
  '^(?P<ip>\\S+) (?P<identd>\\S+) (?P<user>\\S+) \\[(?P<timestamp>[\\w:/]+\\s[+\\-]\\d{4})\\] "(?P<method>\\S+)\\s?(?P<path>\\S+)?\\s?(?P<protocol>\\S+)?" (?P<status>\\d{3}|-) (?P<size>\\d+|-)\\s?"?(?P<referer>[^"]*)"?\\s?"?(?P<useragent>[^"]*)?"?$';
const COMBINED_PATTERN = '<ip> <identd> <user> [<timestamp>] "<method> <path> <protocol>" <status> <size> "<referer>" "<useragent>"';

const CITIES = [
  ['London', 'GB', 'United Kingdom', 'EU', 'Europe', 51.5142, -0.0931, 'Europe/London', 'ENG', 'England'],
  ['Paris', 'FR', 'France', 'EU', 'Europe', 48.8566, 2.3522, 'Europe/Paris', 'IDF', 'Île-de-France'],
  ['São Paulo', 'BR', 'Brazil', 'SA', 'South America', -23.5505, -46.6333, 'America/Sao_Paulo', 'SP', 'São Paulo'],
  ['Tokyo', 'JP', 'Japan', 'AS', 'Asia', 35.6762, 139.6503, 'Asia/Tokyo', '13', 'Tokyo'],
  ['Chicago', 'US', 'United States', 'NA', 'North America', 41.8781, -87.6298, 'America/Chicago', 'IL', 'Illinois'],
] as const;

/** A deterministic generator so every run measures the same input. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

/** 256 × /16 networks in 10.0.0.0/8 with City-shaped records, like a small GeoLite2-City. */
function cityNetworks(): MmdbNetwork[] {
  const networks: MmdbNetwork[] = [];
  for (let i = 0; i < 256; i++) {
    const [city, iso, country, continentCode, continent, latitude, longitude, zone, subCode, subName] = CITIES[i % CITIES.length]!;
    networks.push({
      network: `10.${i}.0.0/16`,
      data: {
        city: { geoname_id: mmdb.uint32(1000 + i), names: { en: city, de: city, fr: city } },
        continent: { code: continentCode, geoname_id: mmdb.uint32(6255148), names: { en: continent } },
        country: { geoname_id: mmdb.uint32(2000 + (i % 5)), iso_code: iso, names: { en: country } },
        registered_country: { geoname_id: mmdb.uint32(2000 + (i % 5)), iso_code: iso, names: { en: country } },
        location: { accuracy_radius: mmdb.uint16(20), latitude, longitude, time_zone: zone },
        postal: { code: `P${i}` },
        subdivisions: [{ geoname_id: mmdb.uint32(3000 + i), iso_code: subCode, names: { en: subName } }],
      },
    });
  }
  return networks;
}

const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];
const PATHS = ['/', '/index.html', '/api/v1/users/42', '/static/app.3f9a.js', '/search?q=rivers&page=2', '/login'];
const AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0',
  'curl/8.5.0',
];

/** Apache/nginx combined-format lines; one client in twenty is outside the database. */
function accessLines(count: number): string[] {
  const next = random(7);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const ip = next() < 0.05 ? `203.0.113.${i & 255}` : `10.${Math.floor(next() * 256)}.${i & 255}.${(i * 7) & 255}`;
    const status = pick([200, 200, 200, 304, 404, 500]);
    lines.push(
      `${ip} - frank [25/Jan/2024:14:00:${String(i % 60).padStart(2, '0')} -0500] "${pick(METHODS)} ${pick(PATHS)} HTTP/1.1" ${status} ${Math.floor(next() * 50000)} "https://example.com/" "${pick(AGENTS)}"`,
    );
  }
  return lines;
}

function securityEvents(count: number): string[] {
  const events: string[] = [];
  for (let i = 0; i < count; i++) {
    events.push(
      'An account was successfully logged on.\r\n\r\n' +
        `Subject:\r\n\tSecurity ID:\t\tS-1-5-18\r\n\tAccount Name:\t\tHOST-${i % 97}$\r\n\tAccount Domain:\t\tWORKGROUP\r\n\tLogon ID:\t\t0x3E7\r\n\r\n` +
        'Logon Information:\r\n\tLogon Type:\t\t5\r\n\tRestricted Admin Mode:\t-\r\n\tVirtual Account:\t\tNo\r\n\tElevated Token:\t\tYes\r\n\r\n' +
        `New Logon:\r\n\tSecurity ID:\t\tS-1-5-18\r\n\tAccount Name:\t\tSYSTEM\r\n\tLogon ID:\t\t0x${(i * 4099).toString(16)}\r\n\tLogon GUID:\t\t{00000000-0000-0000-0000-000000000000}\r\n\r\n` +
        'Privileges:\t\tSeAssignPrimaryTokenPrivilege\r\n\t\t\tSeTcbPrivilege\r\n\t\t\tSeSecurityPrivilege\r\n\r\n' +
        'This event is generated when a logon session is created. It is generated on the computer that was accessed.',
    );
  }
  return events;
}

function sysmonEvents(count: number): string[] {
  const events: string[] = [];
  for (let i = 0; i < count; i++) {
    events.push(
      `Network connection detected:\r\nRuleName: Usermode\r\nUtcTime: 2024-01-31 08:07:${String(i % 60).padStart(2, '0')}.782\r\nProcessGuid: {44ffd2c7-cc3a-63d8-2002-000000000d00}\r\n` +
        `ProcessId: ${7000 + (i % 500)}\r\nImage: C:\\Program Files\\agent\\agent.exe\r\nUser: HOST\\User\r\nProtocol: tcp\r\nInitiated: true\r\nSourceIsIpv6: false\r\n` +
        `SourceIp: 10.0.2.${i & 255}\r\nSourcePort: ${49152 + (i % 1000)}\r\nDestinationIsIpv6: false\r\nDestinationIp: 34.117.8.58\r\nDestinationPort: 443\r\nDestinationPortName: https`,
    );
  }
  return events;
}

interface Workload {
  readonly inputs: readonly Entry[];
  readonly bytes: number;
}

function workload(entries: readonly Entry[], text: (e: Entry) => string): Workload {
  return { inputs: entries, bytes: entries.reduce((sum, e) => sum + Buffer.byteLength(text(e)), 0) / entries.length };
}

/** entries/s of `perEntry` over the workload's inputs, cycled. */
function measure(load: Workload, perEntry: (entry: Entry) => void): Timed {
  const { inputs } = load;
  const step = (i: number) => perEntry(inputs[i % inputs.length]!);
  const count = calibrate(step);
  return rate(count, () => {
    for (let i = 0; i < count; i++) step(i);
  });
}

/** Two rows for a stage: entries/s and MiB/s, each beside the baseline's. */
function rows(name: string, load: Workload, value: Timed, baselineName: string, baseline: Timed): BenchRow[] {
  const mib = (perSecond: Timed) => scaled(perSecond, load.bytes / (1024 * 1024));
  return [
    compared(name, value, 'entries/s', baselineName, baseline),
    compared(`${name} (throughput)`, mib(value), 'MiB/s', baselineName, mib(baseline)),
  ];
}

let sink = 0;

function stageFunction(specs: StageSpec[]): (entry: Entry) => Entry | null {
  return buildPipeline(specs, { clock: new ManualClock(0n), registry: new Registry() }).process!;
}

/** Runs one stage through its built per-entry function, beside the bare ingress loop. */
function benchStage(name: string, spec: StageSpec, load: Workload): BenchRow[] {
  const run = stageFunction([spec]);
  const bare = measure(load, (e) => {
    sink += ingress(e).line.length;
  });
  const staged = measure(load, (e) => {
    const out = run(ingress(e));
    if (out) sink += Object.keys(out.extracted).length;
  });
  return rows(name, load, staged, 'bare ingress loop', bare);
}

const entryOf = (line: string, extracted: Record<string, unknown> = {}): Entry => ({
  labels: { job: 'web', host: 'edge-1' },
  line,
  timestamp: 1_700_000_000_000_000_000n,
  structuredMetadata: [],
  extracted,
});

export async function benchExtractStages(): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-bench-geoip-'));
  try {
    const dbPath = join(dir, 'city.mmdb');
    const dbBytes = writeMmdb(cityNetworks(), { ipVersion: 6, recordSize: 28, databaseType: 'GeoLite2-City' });
    writeFileSync(dbPath, dbBytes);

    const lines = accessLines(4_096);
    const access = workload(
      lines.map((l) => entryOf(l)),
      (e) => e.line,
    );
    const out: BenchRow[] = [];

    // regex: the stage against a raw V8 RegExp with the same groups (no stage, no entry work).
    const rawRegExp = new RegExp(COMBINED.replace(/\(\?P</g, '(?<'));
    const v8 = measure(access, (e) => {
      const m = rawRegExp.exec(e.line);
      if (m) sink += m.length;
    });
    const regexRun = stageFunction([regex({ expression: COMBINED }).spec]);
    const regexRate = measure(access, (e) => {
      const r = regexRun(ingress(e));
      if (r) sink += Object.keys(r.extracted).length;
    });
    out.push(...rows('stage.regex (combined log format)', access, regexRate, 'raw RegExp.exec, no entry', v8));
    out.push(...benchStage('stage.pattern (combined log format)', pattern({ pattern: COMBINED_PATTERN }).spec, access));

    const security = workload(
      securityEvents(1_024).map((m) => entryOf(m, { message: m })),
      (e) => e.line,
    );
    out.push(...benchStage('stage.hostevent (security logon event)', hostEvent({}).spec, security));
    const sysmon = workload(
      sysmonEvents(1_024).map((m) => entryOf(m, { message: m })),
      (e) => e.line,
    );
    out.push(...benchStage('stage.eventlogmessage (sysmon network event)', eventLogMessage({}).spec, sysmon));

    // geoip: the stage against the reader's lookup alone on the same addresses.
    const withIp = workload(
      lines.map((l) => entryOf(l, { ip: l.slice(0, l.indexOf(' ')) })),
      (e) => e.line,
    );
    const reader = new Reader(dbBytes);
    const lookupOnly = measure(withIp, (e) => {
      if (reader.get(e.extracted.ip as string)) sink++;
    });
    const geoipRun = stageFunction([geoip({ db: dbPath, source: 'ip', db_type: 'city' }).spec]);
    const geoipRate = measure(withIp, (e) => {
      const r = geoipRun(ingress(e));
      if (r) sink += Object.keys(r.extracted).length;
    });
    out.push(...rows('stage.geoip (city, 28-bit IPv6 tree)', withIp, geoipRate, 'maxmind Reader.get alone', lookupOnly));

    // The realistic pipeline, through RxJS as a component runs it.
    const webSpecs = [
      regex({ expression: COMBINED }).spec,
      geoip({ db: dbPath, source: 'ip', db_type: 'city' }).spec,
      labels({ values: { method: '', status: '', country: 'geoip_country_code' } }).spec,
    ];
    const through = (specs: StageSpec[]) => {
      const built = buildPipeline(specs, { clock: new ManualClock(0n), registry: new Registry() });
      const input = new Subject<Entry>();
      built.operator(input).subscribe((e) => (sink += e.line.length));
      return (e: Entry) => input.next(ingress(e));
    };
    const bareFlow = measure(access, through([]));
    const webFlow = measure(access, through(webSpecs));
    out.push(...rows('web access logs: regex → geoip → labels (RxJS)', access, webFlow, 'empty pipeline (RxJS)', bareFlow));

    if (sink === 0) throw new Error('no output');
    out.push({ name: 'peak RSS after extraction-stage bench', value: peakRssMiB(), unit: 'MiB' });
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
