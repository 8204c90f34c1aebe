import { Reader } from 'maxmind';
import { describe, expect, it } from 'vitest';
import { mmdb, writeMmdb, type MmdbNetwork } from '../../../playground/samples/mmdb-writer.js';

describe('writeMmdb', () => {
  for (const ipVersion of [4, 6] as const) {
    for (const recordSize of [24, 28, 32] as const) {
      it(`writes an IPv${ipVersion} tree with ${recordSize}-bit records that the maxmind reader reads`, () => {
        const networks = [
          { network: '192.0.2.0/24', data: { name: 'net' } },
          { network: '192.0.2.128/25', data: { name: 'upper half' } },
          { network: '203.0.113.7', data: { name: 'host' } },
          ...(ipVersion === 6 ? [{ network: '2001:db8::/32', data: { name: 'six' } }] : []),
        ];
        const reader = new Reader(
          writeMmdb(networks, {
            ipVersion,
            recordSize,
            databaseType: 'Test-City',
            languages: ['en', 'de'],
            description: { en: 'd' },
            buildEpoch: 1_600_000_000,
          }),
        );
        expect(reader.getWithPrefixLength('192.0.2.1')).toEqual([{ name: 'net' }, 25]);
        expect(reader.getWithPrefixLength('192.0.2.200')).toEqual([{ name: 'upper half' }, 25]);
        expect(reader.getWithPrefixLength('203.0.113.7')).toEqual([{ name: 'host' }, 32]);
        expect(reader.get('203.0.113.8')).toBeNull();
        expect(reader.get('10.0.0.1')).toBeNull();
        if (ipVersion === 6) {
          expect(reader.getWithPrefixLength('2001:db8:1::1')).toEqual([{ name: 'six' }, 32]);
          expect(reader.get('2001:db9::1')).toBeNull();
        }
        expect(reader.metadata).toMatchObject({
          binaryFormatMajorVersion: 2,
          binaryFormatMinorVersion: 0,
          databaseType: 'Test-City',
          description: { en: 'd' },
          ipVersion,
          languages: ['en', 'de'],
          recordSize,
          buildEpoch: new Date(1_600_000_000_000),
        });
      });
    }
  }

  it('encodes every data type', () => {
    const data = {
      text: 'héllo',
      double: 51.5142,
      plainNegative: -0.0931,
      float: mmdb.float(1.5),
      u16: mmdb.uint16(65535),
      u32: mmdb.uint32(4294967295),
      u64: mmdb.uint64(2n ** 64n - 1n),
      u128: mmdb.uint128(2n ** 128n - 1n),
      zero: mmdb.uint32(0),
      i32: mmdb.int32(-5),
      i32max: mmdb.int32(2 ** 31 - 1),
      yes: true,
      no: false,
      list: [1, 'two', [mmdb.uint16(3)], {}],
      bytes: mmdb.bytes(new Uint8Array([0, 255])),
      nested: { deeper: { deepest: 'x' } },
    };
    const record = new Reader(writeMmdb([{ network: '10.0.0.0/8', data }], { ipVersion: 4 })).get('10.1.1.1') as Record<string, unknown>;
    expect(record).toEqual({
      ...data,
      float: 1.5,
      u16: 65535,
      u32: 4294967295,
      u64: 2n ** 64n - 1n,
      u128: 2n ** 128n - 1n,
      zero: 0,
      i32: -5,
      i32max: 2 ** 31 - 1,
      list: [1, 'two', [3], {}],
      bytes: Buffer.from([0, 255]),
    });
  });

  it('encodes strings of every size class', () => {
    const lengths = [0, 28, 29, 284, 285, 65820, 65821, 70000];
    const data = Object.fromEntries(lengths.map((n) => [`s${n}`, 'x'.repeat(n)]));
    const record = new Reader(writeMmdb([{ network: '10.0.0.0/8', data }], { ipVersion: 4 })).get('10.0.0.1');
    expect(record).toEqual(data);
  });

  it('refers to repeated map keys with 11-, 19- and 27-bit pointers', () => {
    const networks: MmdbNetwork[] = [
      { network: '10.0.0.0/8', data: { k: 'a', pad: 'x'.repeat(3000), mid: 'm' } },
      { network: '11.0.0.0/8', data: { early: 'b', k: 'c', mid: 'n' } },
      { network: '12.0.0.0/8', data: { pad: 'y'.repeat(600_000), late: 'd' } },
      { network: '13.0.0.0/8', data: { late: 'e', k: 'f', pad: 'z' } },
    ];
    const buffer = writeMmdb(networks, { ipVersion: 4 });
    const reader = new Reader(buffer);
    expect(reader.get('11.0.0.1')).toEqual({ early: 'b', k: 'c', mid: 'n' });
    expect(reader.get('13.0.0.1')).toEqual({ late: 'e', k: 'f', pad: 'z' });
    // The repeated keys and the shared record are not stored twice.
    for (const key of ['late', 'mid']) expect(buffer.indexOf(key)).toBe(buffer.lastIndexOf(key));
  });

  it('stores an identical record once', () => {
    const one = writeMmdb([{ network: '10.0.0.0/8', data: { a: 'x'.repeat(100) } }], { ipVersion: 4 });
    const two = writeMmdb(
      [
        { network: '10.0.0.0/8', data: { a: 'x'.repeat(100) } },
        { network: '12.0.0.0/8', data: { a: 'x'.repeat(100) } },
      ],
      { ipVersion: 4 },
    );
    expect(two.length - one.length).toBeLessThan(100);
  });

  it('rejects an IPv6 network in an IPv4 database, malformed networks and out-of-range values', () => {
    expect(() => writeMmdb([{ network: '2001:db8::/32', data: {} }], { ipVersion: 4 })).toThrow(
      'IPv6 network 2001:db8::/32 in an IPv4 database',
    );
    expect(() => writeMmdb([{ network: 'nowhere', data: {} }])).toThrow('not a network: nowhere');
    expect(() => writeMmdb([{ network: '10.0.0.0/33', data: {} }], { ipVersion: 4 })).toThrow('bad prefix length in 10.0.0.0/33');
    expect(() => writeMmdb([{ network: '10.0.0.0/8', data: { n: mmdb.uint16(65536) } }])).toThrow('uint16 out of range: 65536');
  });
});
