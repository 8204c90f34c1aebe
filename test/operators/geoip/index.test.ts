import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { geoip } from '../../../operators/geoip/index.js';
import { mmdb, writeMmdb, type MmdbNetwork, type MmdbOptions } from '../../../playground/samples/mmdb-writer.js';
import { entry, runConfig } from '../../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);
const dir = mkdtempSync(join(tmpdir(), 'rivulet-geoip-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function database(name: string, networks: readonly MmdbNetwork[], options: MmdbOptions): string {
  const path = join(dir, `${name}.mmdb`);
  writeFileSync(path, writeMmdb(networks, options));
  return path;
}

// The content of the reference's test databases for 192.0.2.0/24.
const CITY_RECORD = {
  continent: { code: 'EU', geoname_id: mmdb.uint32(6255148), names: { en: 'Europe', de: 'Europa' } },
  country: { geoname_id: mmdb.uint32(2635167), iso_code: 'GB', names: { en: 'United Kingdom' } },
  registered_country: { geoname_id: mmdb.uint32(6252001), iso_code: 'US', names: { en: 'United States' } },
  city: { geoname_id: mmdb.uint32(2643743), names: { en: 'London' } },
  location: { accuracy_radius: mmdb.uint16(100), latitude: 51.5142, longitude: -0.0931, time_zone: 'Europe/London' },
  postal: { code: 'OX1' },
  subdivisions: [{ geoname_id: mmdb.uint32(6269131), iso_code: 'ENG', names: { en: 'England' } }],
};
const cityDb = database(
  'city',
  [
    { network: '192.0.2.0/24', data: CITY_RECORD },
    { network: '198.51.100.0/24', data: { city: { names: 'not a map' } } },
  ],
  {
    ipVersion: 4,
    recordSize: 24,
    databaseType: 'GeoIP2-City',
  },
);
const countryDb = database(
  'country',
  [
    {
      network: '192.0.2.0/24',
      data: { continent: { code: 'NA', names: { en: 'North America' } }, country: { iso_code: 'US', names: { en: 'United States' } } },
    },
  ],
  { ipVersion: 4, recordSize: 28, databaseType: 'GeoIP2-Country' },
);
const asnDb = database(
  'asn',
  [{ network: '192.0.2.0/24', data: { autonomous_system_number: mmdb.uint32(1337), autonomous_system_organization: 'Just a Test' } }],
  {
    ipVersion: 4,
    recordSize: 32,
    databaseType: 'GeoLite2-ASN',
  },
);
const ipv6Db = database(
  'ipv6',
  [
    { network: '192.0.2.0/24', data: { city: { names: { en: 'London' } } } },
    { network: '2001:db8::/32', data: { city: { names: { en: 'Sixville' } }, tags: ['a', 'b'], big: mmdb.uint64(2n ** 40n) } },
  ],
  { ipVersion: 6, recordSize: 28 },
);

function config(db: string, body: string): string {
  return `stage.geoip {\n  db = ${JSON.stringify(db)}\n  source = "ip"\n${body}\n}`;
}

function lookup(text: string, ip: unknown, labels: Record<string, string> = {}) {
  return runConfig(text, [entry('line', labels, { extracted: { ip } })]).entries[0]!;
}

describe('stage.geoip', () => {
  it('adds every city field of the record', () => {
    expect(lookup(config(cityDb, 'db_type = "city"'), '192.0.2.1').extracted).toEqual({
      ip: '192.0.2.1',
      geoip_city_name: 'London',
      geoip_country_name: 'United Kingdom',
      geoip_country_code: 'GB',
      geoip_continent_name: 'Europe',
      geoip_continent_code: 'EU',
      geoip_location_latitude: 51.5142,
      geoip_location_longitude: -0.0931,
      geoip_postal_code: 'OX1',
      geoip_timezone: 'Europe/London',
      geoip_subdivision_name: 'England',
      geoip_subdivision_code: 'ENG',
    });
  });

  it('adds the country fields of a country database', () => {
    expect(lookup(config(countryDb, 'db_type = "country"'), '192.0.2.15').extracted).toEqual({
      ip: '192.0.2.15',
      geoip_country_name: 'United States',
      geoip_country_code: 'US',
      geoip_continent_name: 'North America',
      geoip_continent_code: 'NA',
    });
  });

  it('adds the ASN as a number that stage.labels stringifies', () => {
    const text = `${config(asnDb, 'db_type = "asn"')}\nstage.labels { values = { asn = "geoip_autonomous_system_number" } }`;
    const out = lookup(text, '192.0.2.1');
    expect(out.extracted).toMatchObject({ geoip_autonomous_system_number: 1337, geoip_autonomous_system_organization: 'Just a Test' });
    expect(out.labels).toEqual({ asn: '1337' });
  });

  it('looks up IPv6 and IPv4-mapped addresses in an IPv6 database', () => {
    const text = config(ipv6Db, 'db_type = "city"');
    expect(lookup(text, '2001:db8::1').extracted).toMatchObject({ geoip_city_name: 'Sixville' });
    expect(lookup(text, '::ffff:192.0.2.1').extracted).toMatchObject({ geoip_city_name: 'London' });
  });

  it('sets nothing for an address that is not in the database', () => {
    expect(lookup(config(cityDb, 'db_type = "city"\n  custom_lookups = { name = "city.names.en" }'), '10.0.0.1').extracted).toEqual({
      ip: '10.0.0.1',
    });
  });

  it('leaves the entry unchanged when the source is missing, not convertible, or not an IP by Go rules', () => {
    const text = config(cityDb, 'db_type = "city"');
    expect(runConfig(text, [entry('l')]).entries[0]!.extracted).toEqual({});
    for (const ip of [null, ['192.0.2.1'], '192.0.2.01', ' 192.0.2.1', '192.0.2.0/24', 'fe80::1%eth0', 'london', 192]) {
      expect(lookup(text, ip).extracted, JSON.stringify(ip)).toEqual({ ip });
    }
  });

  it('skips the custom lookups too when the lookup fails: IPv6 address in an IPv4 database', () => {
    const text = config(cityDb, 'db_type = "city"\n  custom_lookups = { anything = "`\\"literal\\"`" }');
    expect(lookup(text, '192.0.2.1').extracted).toMatchObject({ anything: 'literal' });
    expect(lookup(text, '2001:db8::1').extracted).toEqual({ ip: '2001:db8::1' });
  });

  it('skips the custom lookups too when the record has the wrong shape for its type', () => {
    const text = config(cityDb, 'db_type = "city"\n  custom_lookups = { raw = "city.names" }');
    expect(lookup(text, '198.51.100.7').extracted).toEqual({ ip: '198.51.100.7' });
    // Without a typed lookup the record is read generically and the lookup succeeds.
    expect(lookup(config(cityDb, 'custom_lookups = { raw = "city.names" }'), '198.51.100.7').extracted).toEqual({
      ip: '198.51.100.7',
      raw: 'not a map',
    });
  });

  it('stores custom lookup results as they are, after and over the typed fields', () => {
    const text = config(
      ipv6Db,
      'db_type = "city"\n  custom_lookups = {\n    geoip_city_name = "tags[0]",\n    tags = "",\n    names = "city.names",\n    big = "big",\n    none = "missing.path",\n  }',
    );
    const out = lookup(text, '2001:db8::42');
    expect(out.extracted).toEqual({
      ip: '2001:db8::42',
      geoip_city_name: 'a',
      tags: ['a', 'b'],
      names: { en: 'Sixville' },
      big: 2n ** 40n,
    });
  });

  it('accepts an explicitly empty custom_lookups without db_type, extracting nothing', () => {
    expect(lookup(config(cityDb, 'custom_lookups = {}'), '192.0.2.1').extracted).toEqual({ ip: '192.0.2.1' });
  });

  it('reports configuration errors in the reference order, with their texts', () => {
    expect(() => runConfig('stage.geoip {\n  db = ""\n  source = ""\n}', [])).toThrow(
      'test.alloy:2:3: stage.geoip: db path cannot be empty',
    );
    expect(() => runConfig('stage.geoip {\n  db = "x"\n  source = ""\n  db_type = "fake"\n}', [])).toThrow(
      'test.alloy:3:3: stage.geoip: source cannot be empty',
    );
    expect(() => runConfig('stage.geoip {\n  db = "x"\n  source = "ip"\n}', [])).toThrow(
      'test.alloy:1:1: stage.geoip: db type or values need to be set',
    );
    expect(() => runConfig('stage.geoip {\n  db = "x"\n  source = "ip"\n  db_type = "fake"\n}', [])).toThrow(
      'test.alloy:4:3: stage.geoip: db type should be either city or asn',
    );
    expect(() => runConfig('stage.geoip {\n  db = "x"\n  source = "ip"\n  custom_lookups = { f = ".-bad" }\n}', [])).toThrow(
      /^test\.alloy:4:3: stage\.geoip: could not compile JMES expression$/,
    );
    expect(() => runConfig('stage.geoip {\n  source = "ip"\n  db_type = "city"\n}', [])).toThrow(
      'test.alloy:1:1: stage.geoip: missing required attribute "db"',
    );
    // Unlike stage.json, the reference leaves the parser's reason out.
    expect(() => geoip({ db: 'x', source: 'ip', custom_lookups: { 'my name': '' } })).toThrow(
      /^stage\.geoip: could not compile JMES expression$/,
    );
  });

  it('fails to build when the database cannot be read or is not a database', () => {
    const missing = join(dir, 'missing.mmdb');
    expect(() => runConfig(config(missing, 'db_type = "city"'), [])).toThrow(
      `test.alloy:2:3: stage.geoip: open ${missing}: no such file or directory`,
    );
    const junk = join(dir, 'junk.mmdb');
    writeFileSync(junk, 'not a database');
    expect(() => runConfig(config(junk, 'db_type = "city"'), [])).toThrow(
      'test.alloy:2:3: stage.geoip: error opening database: invalid MaxMind DB file',
    );
  });

  it('never throws for arbitrary source text (property)', () => {
    const text = config(ipv6Db, 'db_type = "city"\n  custom_lookups = { t = "tags" }');
    const ipish = fc.oneof(fc.string(), fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), fc.stringMatching(/^[0-9a-f:.%]{0,20}$/));
    fc.assert(
      fc.property(fc.array(ipish, { minLength: 1, maxLength: 5 }), (ips) => {
        const { entries } = runConfig(
          text,
          ips.map((ip) => entry('l', {}, { extracted: { ip } })),
        );
        expect(entries).toHaveLength(ips.length);
        for (const [i, out] of entries.entries()) expect(out.extracted.ip).toBe(ips[i]);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
