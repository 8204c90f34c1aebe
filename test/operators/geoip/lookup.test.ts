import { describe, expect, it } from 'vitest';
import { GeoipDatabase, GeoipLookupError, geoipFields, parseGoIP } from '../../../operators/geoip/lookup.js';
import { mmdb, writeMmdb } from '../../../playground/samples/mmdb-writer.js';

function bytesOf(text: string): string | undefined {
  const ip = parseGoIP(text);
  return ip && `${Buffer.from(ip.bytes).toString('hex')}${ip.isV4 ? ' v4' : ''}`;
}

describe('parseGoIP', () => {
  it('accepts IPv4 dotted quads and stores them IPv4-mapped', () => {
    expect(bytesOf('192.0.2.1')).toBe('00000000000000000000ffffc0000201 v4');
    expect(bytesOf('0.0.0.0')).toBe('00000000000000000000ffff00000000 v4');
    expect(bytesOf('255.255.255.255')).toBe('00000000000000000000ffffffffffff v4');
  });

  it('rejects IPv4 text Go rejects: leading zeros, values over 255, wrong field counts, stray characters', () => {
    for (const text of [
      '192.0.2.01',
      '256.0.0.1',
      '1.2.3',
      '1.2.3.4.5',
      '1..2.3',
      '.1.2.3',
      '1.2.3.',
      ' 1.2.3.4',
      '1.2.3.4 ',
      '1.2.3.4/24',
      '1.2.3.a',
      '',
      '1234',
    ]) {
      expect(bytesOf(text), text).toBeUndefined();
    }
  });

  it('accepts IPv6 forms, treating IPv4-mapped addresses as IPv4', () => {
    expect(bytesOf('::')).toBe('00000000000000000000000000000000');
    expect(bytesOf('::1')).toBe('00000000000000000000000000000001');
    expect(bytesOf('2001:DB8::1')).toBe('20010db8000000000000000000000001');
    expect(bytesOf('2001:db8:0:0:0:0:0:1')).toBe('20010db8000000000000000000000001');
    expect(bytesOf('fe80::')).toBe('fe800000000000000000000000000000');
    expect(bytesOf('::ffff:192.0.2.1')).toBe('00000000000000000000ffffc0000201 v4');
    expect(bytesOf('::192.0.2.1')).toBe('000000000000000000000000c0000201');
    expect(bytesOf('1:2:3:4:5:6:1.2.3.4')).toBe('00010002000300040005000601020304');
  });

  it('rejects IPv6 text Go rejects: zones, five hex digits, two ellipses, misplaced IPv4, a useless ellipsis', () => {
    for (const text of [
      'fe80::1%eth0',
      '12345::',
      '1::2::3',
      '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7',
      '1:2:3:4:5:1.2.3.4',
      '::ffff:192.0.2.01',
      '1:2:3:4:5:6:7::8',
      '1:2:3:4::5:6:7:8',
      ':1::',
      '1:',
      '::1 ',
      '2001:db8::/32',
      'g::1',
    ]) {
      expect(bytesOf(text), text).toBeUndefined();
    }
  });

  it('accepts an ellipsis that stands for one group', () => {
    expect(bytesOf('1:2:3:4:5:6:7::')).toBe('00010002000300040005000600070000');
  });
});

describe('GeoipDatabase', () => {
  const v4 = new GeoipDatabase(writeMmdb([{ network: '192.0.2.0/24', data: { a: 'v4' } }], { ipVersion: 4, recordSize: 24 }));
  const v6 = new GeoipDatabase(
    writeMmdb(
      [
        { network: '192.0.2.0/24', data: { a: 'v4' } },
        { network: '2001:db8::/32', data: { a: 'v6' } },
      ],
      { ipVersion: 6, recordSize: 32 },
    ),
  );

  it('looks up IPv4 and IPv4-mapped addresses in both kinds of tree', () => {
    expect(v4.lookup(parseGoIP('192.0.2.1')!)).toEqual({ a: 'v4' });
    expect(v4.lookup(parseGoIP('::ffff:192.0.2.1')!)).toEqual({ a: 'v4' });
    expect(v6.lookup(parseGoIP('::ffff:192.0.2.1')!)).toEqual({ a: 'v4' });
    expect(v6.lookup(parseGoIP('::192.0.2.1')!)).toEqual({ a: 'v4' });
    expect(v6.lookup(parseGoIP('2001:db8::5')!)).toEqual({ a: 'v6' });
    expect(v6.lookup(parseGoIP('2001:db9::5')!)).toBeNull();
  });

  it('fails an IPv6 lookup in an IPv4-only database', () => {
    expect(() => v4.lookup(parseGoIP('2001:db8::1')!)).toThrow(
      new GeoipLookupError("error looking up '2001:db8:0:0:0:0:0:1': you attempted to look up an IPv6 address in an IPv4-only database"),
    );
  });

  it('reports unreadable and invalid files with Go-style messages', () => {
    expect(() => GeoipDatabase.open('/nonexistent/geo.mmdb')).toThrow('open /nonexistent/geo.mmdb: no such file or directory');
    expect(() => new GeoipDatabase(Buffer.from('not a database'))).toThrow();
  });
});

describe('geoipFields', () => {
  it('reads nothing from a missing record', () => {
    expect(geoipFields(null, 'city')).toEqual({});
  });

  it('writes only non-empty strings, and latitude and longitude together when either is non-zero', () => {
    expect(geoipFields({ city: { names: { en: '' } }, location: { latitude: 0, longitude: 5, time_zone: '' } }, 'city')).toEqual({
      geoip_location_latitude: 0,
      geoip_location_longitude: 5,
    });
    expect(geoipFields({ location: { latitude: 0, longitude: 0 } }, 'city')).toEqual({});
  });

  it('takes the most specific (last) subdivision', () => {
    const record = {
      subdivisions: [
        { iso_code: 'ENG', names: { en: 'England' } },
        { iso_code: 'LND', names: { en: 'London' } },
      ],
    };
    expect(geoipFields(record, 'city')).toEqual({ geoip_subdivision_code: 'LND', geoip_subdivision_name: 'London' });
  });

  it('reads the country, not the registered country, and no city fields for a country record', () => {
    const record = {
      city: { names: { en: 'X' } },
      country: { iso_code: 'GB', names: { en: 'United Kingdom' } },
      registered_country: { iso_code: 'US' },
      continent: { code: 'EU', names: { en: 'Europe' } },
    };
    expect(geoipFields(record, 'country')).toEqual({
      geoip_country_code: 'GB',
      geoip_country_name: 'United Kingdom',
      geoip_continent_code: 'EU',
      geoip_continent_name: 'Europe',
    });
  });

  it('keeps the ASN as the number the database holds, and skips zero', () => {
    expect(geoipFields({ autonomous_system_number: 1337, autonomous_system_organization: 'Just a Test' }, 'asn')).toEqual({
      geoip_autonomous_system_number: 1337,
      geoip_autonomous_system_organization: 'Just a Test',
    });
    expect(geoipFields({ autonomous_system_number: 2n ** 40n }, 'asn')).toEqual({ geoip_autonomous_system_number: 2n ** 40n });
    expect(geoipFields({ autonomous_system_number: 0 }, 'asn')).toEqual({});
  });

  it('fails the lookup when a field the typed record reads has the wrong shape', () => {
    expect(() => geoipFields('text', 'city')).toThrow('cannot unmarshal string into a map at record');
    expect(() => geoipFields({ city: { names: 'London' } }, 'city')).toThrow('cannot unmarshal string into a map of strings at city.names');
    expect(() => geoipFields({ location: { accuracy_radius: 70000 } }, 'city')).toThrow(
      'cannot unmarshal number into an unsigned integer (16 bits) at location.accuracy_radius',
    );
    expect(() => geoipFields({ autonomous_system_number: -1 }, 'asn')).toThrow(
      'cannot unmarshal number into an unsigned integer at autonomous_system_number',
    );
    expect(() => geoipFields({ subdivisions: {} }, 'city')).toThrow('cannot unmarshal a map into a list at subdivisions');
    expect(() => geoipFields({ subdivisions: [{ names: { en: 'A' } }, { names: { en: 1 } }] }, 'city')).toThrow(
      'cannot unmarshal a map into a map of strings at subdivisions[1].names',
    );
    expect(() => geoipFields({ subdivisions: [[]] }, 'city')).toThrow('cannot unmarshal a list into a map at subdivisions[0]');
    expect(() => geoipFields({ city: { geoname_id: 2 ** 64 } }, 'city')).toThrow(
      'cannot unmarshal number into an unsigned integer at city.geoname_id',
    );
    expect(geoipFields({ city: { geoname_id: 2 ** 63, names: { en: 'B' } } }, 'city')).toEqual({ geoip_city_name: 'B' });
    expect(() => geoipFields({ country: { is_in_european_union: 1 } }, 'country')).toThrow(
      'cannot unmarshal number into a bool at country.is_in_european_union',
    );
  });

  it('ignores keys the typed record does not read', () => {
    expect(geoipFields({ extra: [1, 2], city: { names: { en: 'Paris' }, extra: 'x' } }, 'city')).toEqual({ geoip_city_name: 'Paris' });
  });

  it('reads records written with explicit MMDB types', () => {
    const db = new GeoipDatabase(
      writeMmdb(
        [
          {
            network: '10.0.0.0/8',
            data: {
              location: {
                latitude: mmdb.double(1.5),
                longitude: mmdb.float(2.5),
                accuracy_radius: mmdb.uint16(10),
                metro_code: mmdb.uint32(5),
              },
            },
          },
        ],
        { ipVersion: 4 },
      ),
    );
    expect(geoipFields(db.lookup(parseGoIP('10.1.2.3')!), 'city')).toEqual({ geoip_location_latitude: 1.5, geoip_location_longitude: 2.5 });
  });
});
