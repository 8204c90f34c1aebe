import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mmdb, writeMmdb, type MmdbNetwork } from './mmdb-writer.js';

/** Placeholder for the generated database's path in sample configs. */
export const GEOIP_CITY_DB = '{{geoip_city_db}}';

function city(
  name: string,
  country: [code: string, name: string],
  continent: [code: string, name: string],
  location: [lat: number, lon: number, zone: string],
  subdivision?: [code: string, name: string],
) {
  return {
    city: { names: { en: name } },
    country: { iso_code: country[0], names: { en: country[1] } },
    continent: { code: continent[0], names: { en: continent[1] } },
    location: { accuracy_radius: mmdb.uint16(50), latitude: location[0], longitude: location[1], time_zone: location[2] },
    ...(subdivision ? { subdivisions: [{ iso_code: subdivision[0], names: { en: subdivision[1] } }] } : {}),
  };
}

/**
 * The sample City database: the documentation address ranges (RFC 5737, RFC 3849) placed in a
 * few cities, so no real GeoIP data is needed.
 */
export const SAMPLE_CITY_NETWORKS: readonly MmdbNetwork[] = [
  {
    network: '192.0.2.0/24',
    data: city('London', ['GB', 'United Kingdom'], ['EU', 'Europe'], [51.5142, -0.0931, 'Europe/London'], ['ENG', 'England']),
  },
  {
    network: '198.51.100.0/24',
    data: city('São Paulo', ['BR', 'Brazil'], ['SA', 'South America'], [-23.5475, -46.6361, 'America/Sao_Paulo'], ['SP', 'São Paulo']),
  },
  { network: '203.0.113.0/24', data: city('Tokyo', ['JP', 'Japan'], ['AS', 'Asia'], [35.6895, 139.6917, 'Asia/Tokyo'], ['13', 'Tokyo']) },
  {
    network: '2001:db8::/32',
    data: city('Berlin', ['DE', 'Germany'], ['EU', 'Europe'], [52.5244, 13.4105, 'Europe/Berlin'], ['BE', 'Land Berlin']),
  },
];

/**
 * Writes the sample database (same bytes every time) and returns its path: a fixed place under
 * the system's temp directory, so share links that name it keep working across restarts.
 */
export function sampleCityDatabase(dir = join(tmpdir(), 'rivulet-playground')): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'GeoIP2-City-sample.mmdb');
  const bytes = writeMmdb(SAMPLE_CITY_NETWORKS, {
    ipVersion: 6,
    recordSize: 28,
    databaseType: 'GeoIP2-City',
    buildEpoch: 1714521600,
    description: { en: 'Rivulet playground sample' },
  });
  // Written beside and renamed, so a run reading it meanwhile never sees half a file.
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, bytes);
  renameSync(partial, path);
  return path;
}
