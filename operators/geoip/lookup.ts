/**
 * Geolocation lookups for `stage.geoip`: Go's IP-address grammar, an MMDB database opened once,
 * and the City / Country / ASN records read the way the reference's typed reader reads them (a
 * record whose fields have the wrong shape is a lookup error, not a partial result).
 */
import { readFileSync } from 'node:fs';
import { Reader, type Response } from 'maxmind';
import { DataError } from '../../lib/data-error.js';

/** An address as Go's `net.ParseIP` sees it: 16 bytes, IPv4 stored in the `::ffff:a.b.c.d` form. */
export interface ParsedIp {
  readonly bytes: Uint8Array;
  /** Go's `ip.To4() != nil`: a dotted quad or an IPv4-mapped IPv6 address. */
  readonly isV4: boolean;
}

/**
 * Go's `net.ParseIP`: an IPv4 dotted quad (no leading zeros, each part ≤ 255) or an IPv6 address
 * (`::` once, up to four hex digits per group, an optional dotted quad in the last 32 bits). Zones,
 * CIDR suffixes and surrounding white space are rejected. Returns `undefined` when Go returns nil.
 *
 * @example parseGoIP('::ffff:192.0.2.1')?.isV4 === true; parseGoIP('192.0.2.01') === undefined
 */
export function parseGoIP(text: string): ParsedIp | undefined {
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '.') return fromV4(parseIPv4(text));
    if (c === ':') return fromV6(parseIPv6(text));
    if (c === '%') return undefined;
  }
  return undefined;
}

function fromV4(quad: number[] | undefined): ParsedIp | undefined {
  if (!quad) return undefined;
  const bytes = new Uint8Array(16);
  bytes[10] = 0xff;
  bytes[11] = 0xff;
  bytes.set(quad, 12);
  return { bytes, isV4: true };
}

function fromV6(bytes: Uint8Array | undefined): ParsedIp | undefined {
  if (!bytes) return undefined;
  let isV4 = bytes[10] === 0xff && bytes[11] === 0xff;
  for (let i = 0; i < 10 && isV4; i++) isV4 = bytes[i] === 0;
  return { bytes, isV4 };
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

/** Four decimal fields separated by dots, exactly as Go's netip parser accepts them. */
function parseIPv4(s: string): number[] | undefined {
  const fields: number[] = [];
  let value = 0;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (isDigit(c)) {
      if (digits === 1 && value === 0) return undefined; // leading zero
      value = value * 10 + (c.charCodeAt(0) - 48);
      digits++;
      if (value > 255) return undefined;
    } else if (c === '.') {
      if (i === 0 || i === s.length - 1 || s[i - 1] === '.') return undefined;
      if (fields.length === 3) return undefined;
      fields.push(value);
      value = 0;
      digits = 0;
    } else {
      return undefined;
    }
  }
  if (fields.length < 3) return undefined;
  fields.push(value);
  return fields;
}

function hexValue(c: string | undefined): number {
  if (c === undefined) return -1;
  const code = c.charCodeAt(0);
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  if (code >= 65 && code <= 70) return code - 55;
  return -1;
}

/** Go's netip IPv6 grammar (without zones, which net.ParseIP rejects). */
function parseIPv6(input: string): Uint8Array | undefined {
  if (input.includes('%')) return undefined;
  const ip = new Uint8Array(16);
  let s = input;
  let ellipsis = -1;
  if (s.startsWith('::')) {
    ellipsis = 0;
    s = s.slice(2);
    if (s === '') return ip;
  }
  let i = 0;
  while (i < 16) {
    let off = 0;
    let acc = 0;
    for (; off < s.length; off++) {
      const h = hexValue(s[off]);
      if (h < 0) break;
      if (off > 3) return undefined; // more than four hex digits
      acc = acc * 16 + h;
    }
    if (off === 0) return undefined;
    if (s[off] === '.') {
      if (ellipsis < 0 && i !== 12) return undefined;
      if (i + 4 > 16) return undefined;
      const quad = parseIPv4(s);
      if (!quad) return undefined;
      ip.set(quad, i);
      s = '';
      i += 4;
      break;
    }
    ip[i] = acc >> 8;
    ip[i + 1] = acc & 0xff;
    i += 2;
    s = s.slice(off);
    if (s === '') break;
    if (s[0] !== ':' || s.length === 1) return undefined;
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) return undefined; // a second `::`
      ellipsis = i;
      s = s.slice(1);
      if (s === '') break;
    }
  }
  if (s !== '') return undefined;
  if (i < 16) {
    if (ellipsis < 0) return undefined;
    const gap = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) ip[j + gap] = ip[j]!;
    ip.fill(0, ellipsis, ellipsis + gap);
  } else if (ellipsis >= 0) {
    return undefined; // `::` must stand for at least one zero group
  }
  return ip;
}

/** A failed lookup: the reference logs it and leaves the entry unchanged. */
export class GeoipLookupError extends DataError {
  constructor(message: string) {
    super(message);
    this.name = 'GeoipLookupError';
  }
}

/** An MMDB database read into memory once. */
export class GeoipDatabase {
  private readonly reader: Reader<Response>;

  constructor(contents: Buffer) {
    this.reader = new Reader<Response>(contents);
  }

  /**
   * Reads and parses a database file. Errors carry Go-style text: `open <path>: no such file or
   * directory`, `error opening database: invalid MaxMind DB file`.
   */
  static open(path: string): GeoipDatabase {
    let contents: Buffer;
    try {
      contents = readFileSync(path);
    } catch (err) {
      throw new Error(`open ${path}: ${describeFsError(err as NodeJS.ErrnoException)}`);
    }
    try {
      return new GeoipDatabase(contents);
    } catch {
      throw new Error('error opening database: invalid MaxMind DB file');
    }
  }

  /** 4 or 6, from the database's metadata. */
  get ipVersion(): number {
    return this.reader.metadata.ipVersion;
  }

  /**
   * The record for an address, decoded generically (maps, lists, strings, numbers, bigints for
   * 64/128-bit unsigned integers, booleans, byte buffers), or null when the address is not in
   * the database.
   *
   * @throws GeoipLookupError for an IPv6 address in an IPv4-only database.
   */
  lookup(ip: ParsedIp): unknown {
    if (ip.isV4) return this.reader.get(`${ip.bytes[12]}.${ip.bytes[13]}.${ip.bytes[14]}.${ip.bytes[15]}`);
    if (this.ipVersion === 4) {
      throw new GeoipLookupError(
        `error looking up '${formatIPv6(ip.bytes)}': you attempted to look up an IPv6 address in an IPv4-only database`,
      );
    }
    return this.reader.get(formatIPv6(ip.bytes));
  }
}

function describeFsError(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    default:
      return err.message;
  }
}

/** All eight groups in hex; the reader parses this form, and it is unambiguous in messages. */
function formatIPv6(bytes: Uint8Array): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return groups.join(':');
}

// ---------------------------------------------------------------------------------------------
// Typed records. The reference decodes City, Country and ASN records into fixed Go structs, and
// a field of the wrong type (a string where a map is expected, a negative or fractional number in
// an unsigned field, …) fails the whole lookup. Keys the structs do not name are ignored.

type Shape =
  | 'string'
  | 'bool'
  | 'uint'
  | 'uint16'
  | 'float'
  | 'names'
  | { readonly struct: Readonly<Record<string, Shape>> }
  | { readonly list: Shape };

const namedPlace = { struct: { names: 'names', geoname_id: 'uint' } } as const;
const continent = { struct: { names: 'names', code: 'string', geoname_id: 'uint' } } as const;
const country = { struct: { names: 'names', iso_code: 'string', geoname_id: 'uint', is_in_european_union: 'bool' } } as const;
const representedCountry = { struct: { ...country.struct, type: 'string' } } as const;
const traits = { struct: { is_anonymous_proxy: 'bool', is_anycast: 'bool', is_satellite_provider: 'bool' } } as const;

const COUNTRY_SHAPE: Shape = {
  struct: { continent, country, registered_country: country, represented_country: representedCountry, traits },
};
const CITY_SHAPE: Shape = {
  struct: {
    city: namedPlace,
    postal: { struct: { code: 'string' } },
    continent,
    subdivisions: { list: { struct: { names: 'names', iso_code: 'string', geoname_id: 'uint' } } },
    country,
    registered_country: country,
    represented_country: representedCountry,
    location: { struct: { time_zone: 'string', latitude: 'float', longitude: 'float', metro_code: 'uint', accuracy_radius: 'uint16' } },
    traits,
  },
};
const ASN_SHAPE: Shape = { struct: { autonomous_system_number: 'uint', autonomous_system_organization: 'string' } };

const UINT64_MAX = (1n << 64n) - 1n;

/** A value that does not fit its shape: what was wanted, and where (built only on a failure). */
interface ShapeMismatch {
  readonly value: unknown;
  readonly want: string;
  path: string;
}

/** Throws GeoipLookupError when `value` does not fit `shape`. */
function checkShape(value: unknown, shape: Shape): void {
  const mismatch = shapeMismatch(value, shape);
  if (mismatch)
    throw new GeoipLookupError(`cannot unmarshal ${describeValue(mismatch.value)} into ${mismatch.want} at ${mismatch.path || 'record'}`);
}

/**
 * The first place where `value` does not fit `shape`, or undefined. Every lookup runs this over
 * its whole record, so the fitting case allocates nothing: the path is put together only on the
 * way back from a mismatch (`subdivisions[0].names`).
 */
function shapeMismatch(value: unknown, shape: Shape): ShapeMismatch | undefined {
  if (typeof shape === 'object') {
    if ('list' in shape) {
      if (!Array.isArray(value)) return { value, want: 'a list', path: '' };
      for (let i = 0; i < value.length; i++) {
        const inner = shapeMismatch(value[i], shape.list);
        if (inner) return within(inner, `[${i}]`);
      }
      return undefined;
    }
    if (!isPlainMap(value)) return { value, want: 'a map', path: '' };
    for (const key in shape.struct) {
      const field = value[key];
      if (field === undefined || !Object.hasOwn(value, key)) continue;
      const inner = shapeMismatch(field, shape.struct[key]!);
      if (inner) return within(inner, key);
    }
    return undefined;
  }
  switch (shape) {
    case 'string':
      return typeof value === 'string' ? undefined : { value, want: 'a string', path: '' };
    case 'bool':
      return typeof value === 'boolean' ? undefined : { value, want: 'a bool', path: '' };
    case 'float':
      return typeof value === 'number' ? undefined : { value, want: 'a float', path: '' };
    case 'uint':
    case 'uint16': {
      // 2^64 is the first double above UINT64_MAX, so `< 2 ** 64` is the exact bound for numbers.
      const ok =
        typeof value === 'number'
          ? Number.isInteger(value) && value >= 0 && (shape === 'uint' ? value < 2 ** 64 : value <= 0xffff)
          : typeof value === 'bigint' && value >= 0n && value <= (shape === 'uint' ? UINT64_MAX : 0xffffn);
      return ok ? undefined : { value, want: `an unsigned integer${shape === 'uint16' ? ' (16 bits)' : ''}`, path: '' };
    }
    case 'names':
      return isPlainMap(value) && holdsOnlyStrings(value) ? undefined : { value, want: 'a map of strings', path: '' };
  }
}

function holdsOnlyStrings(map: Record<string, unknown>): boolean {
  for (const key in map) if (Object.hasOwn(map, key) && typeof map[key] !== 'string') return false;
  return true;
}

/** The mismatch seen from one level up: `step` is a key or a `[i]` index. */
function within(mismatch: ShapeMismatch, step: string): ShapeMismatch {
  const inner = mismatch.path;
  mismatch.path = inner === '' ? step : inner.startsWith('[') ? step + inner : `${step}.${inner}`;
  return mismatch;
}

function isPlainMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

function describeValue(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Uint8Array) return 'bytes';
  return typeof value === 'object' ? 'a map' : typeof value;
}

function field(record: unknown, ...path: string[]): unknown {
  let current = record;
  for (const key of path) {
    if (!isPlainMap(current) || !Object.hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

function setString(out: Record<string, unknown>, key: string, value: unknown): void {
  if (typeof value === 'string' && value !== '') out[key] = value;
}

/** Which typed record a lookup reads. */
export type GeoipDbType = 'city' | 'asn' | 'country';

/**
 * The extracted values of one typed record: only non-empty strings and non-zero numbers are set
 * (latitude and longitude together, when either is non-zero). A null record (address not in the
 * database) gives nothing.
 *
 * @throws GeoipLookupError when a field the typed record reads has the wrong shape.
 */
export function geoipFields(record: unknown, dbType: GeoipDbType): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (record === null || record === undefined) return out;
  if (dbType === 'asn') {
    checkShape(record, ASN_SHAPE);
    const asn = field(record, 'autonomous_system_number');
    if (asn !== undefined && asn !== 0 && asn !== 0n) out.geoip_autonomous_system_number = asn;
    setString(out, 'geoip_autonomous_system_organization', field(record, 'autonomous_system_organization'));
    return out;
  }
  checkShape(record, dbType === 'city' ? CITY_SHAPE : COUNTRY_SHAPE);
  if (dbType === 'city') setString(out, 'geoip_city_name', field(record, 'city', 'names', 'en'));
  setString(out, 'geoip_country_name', field(record, 'country', 'names', 'en'));
  setString(out, 'geoip_country_code', field(record, 'country', 'iso_code'));
  setString(out, 'geoip_continent_name', field(record, 'continent', 'names', 'en'));
  setString(out, 'geoip_continent_code', field(record, 'continent', 'code'));
  if (dbType === 'country') return out;
  const latitude = (field(record, 'location', 'latitude') as number | undefined) ?? 0;
  const longitude = (field(record, 'location', 'longitude') as number | undefined) ?? 0;
  if (latitude !== 0 || longitude !== 0) {
    out.geoip_location_latitude = latitude;
    out.geoip_location_longitude = longitude;
  }
  setString(out, 'geoip_postal_code', field(record, 'postal', 'code'));
  setString(out, 'geoip_timezone', field(record, 'location', 'time_zone'));
  const subdivisions = field(record, 'subdivisions') as unknown[] | undefined;
  // The last subdivision is the most specific one.
  const subdivision = subdivisions && subdivisions.length > 0 ? subdivisions[subdivisions.length - 1] : undefined;
  setString(out, 'geoip_subdivision_name', field(subdivision, 'names', 'en'));
  setString(out, 'geoip_subdivision_code', field(subdivision, 'iso_code'));
  return out;
}
