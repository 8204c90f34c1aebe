import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Positions } from '../../../receivers/file/positions.js';

describe('positions file', () => {
  it('saves offsets with device and inode and loads them back', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'rivulet-pos-')), 'nested', 'positions.json');
    const positions = new Positions(file);
    positions.set('/var/log/b.log', { offset: 10, dev: 1n, ino: 2n });
    positions.set('/var/log/a.log', { offset: 2 ** 40, dev: 3n, ino: 18_446_744_073_709_551_615n });
    await positions.save();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      version: 1,
      files: {
        '/var/log/a.log': { offset: '1099511627776', dev: '3', ino: '18446744073709551615' },
        '/var/log/b.log': { offset: '10', dev: '1', ino: '2' },
      },
    });
    const loaded = new Positions(file);
    await loaded.load();
    expect(loaded.get('/var/log/b.log')).toEqual({ offset: 10, dev: 1n, ino: 2n });
    expect(loaded.get('/var/log/a.log')?.ino).toBe(18_446_744_073_709_551_615n);
  });

  it('writes, in a save that waited for the one before, the positions as they are when it writes', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'rivulet-pos-')), 'positions.json');
    const positions = new Positions(file);
    const saved = () => (JSON.parse(readFileSync(file, 'utf8')) as { files: Record<string, { offset: string }> }).files['/a.log']?.offset;
    positions.set('/a.log', { offset: 1, dev: 1n, ino: 1n });
    const first = positions.save();
    positions.set('/a.log', { offset: 2, dev: 1n, ino: 1n });
    const second = positions.save();
    // Asked for while the second still waits: the same save, which writes the latest offset.
    positions.set('/a.log', { offset: 3, dev: 1n, ino: 1n });
    expect(positions.save()).toBe(second);
    await first;
    await second;
    expect(saved()).toBe('3');
  });

  it('starts empty without a file and refuses a file it cannot read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-pos-'));
    const missing = new Positions(join(dir, 'none.json'));
    await missing.load();
    expect(missing.get('x')).toBeUndefined();
    const corrupt = join(dir, 'corrupt.json');
    writeFileSync(corrupt, '{"version":');
    await expect(new Positions(corrupt).load()).rejects.toThrow(
      `positions file ${corrupt} is not valid JSON: Unexpected end of JSON input`,
    );
    writeFileSync(corrupt, '{"version":7}');
    await expect(new Positions(corrupt).load()).rejects.toThrow(`positions file ${corrupt} has an unknown format`);
  });

  it('starts clean on an empty positions file, saying so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-pos-'));
    for (const text of ['', '\n  \n']) {
      const file = join(dir, 'empty.json');
      writeFileSync(file, text);
      const logs: string[] = [];
      const positions = new Positions(file, (level, message, fields) => logs.push(`${level} ${message} ${JSON.stringify(fields)}`));
      await positions.load();
      expect(positions.paths()).toEqual([]);
      expect(logs).toEqual([`warn positions file is empty, starting without positions {"file":${JSON.stringify(file)}}`]);
    }
  });

  it('drops records with an offset that is negative, fractional or not a number, and never saves them back', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'rivulet-pos-')), 'positions.json');
    const record = (offset: unknown, dev: unknown = '1', ino: unknown = '2') => ({ offset, dev, ino });
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        files: {
          '/ok.log': record('42'),
          '/ok-number.log': record(7, 1, 3),
          '/negative.log': record('-5'),
          '/fraction.log': record('1.5'),
          '/fraction-number.log': record(2.5),
          '/word.log': record('abc'),
          '/empty.log': record(''),
          '/exponent.log': record('1e3'),
          '/huge.log': record('99999999999999999999'),
          '/bad-inode.log': record('1', '1', 'x'),
          '/not-an-object.log': 'offset',
        },
      }),
    );
    const logs: string[] = [];
    const positions = new Positions(file, (level, message, fields) =>
      logs.push(`${level} ${message} ${(fields as { path: string }).path}`),
    );
    await positions.load();
    expect(positions.paths().sort()).toEqual(['/ok-number.log', '/ok.log']);
    expect(positions.get('/ok.log')).toEqual({ offset: 42, dev: 1n, ino: 2n });
    expect(positions.get('/ok-number.log')).toEqual({ offset: 7, dev: 1n, ino: 3n });
    expect(logs).toEqual(
      [
        '/negative.log',
        '/fraction.log',
        '/fraction-number.log',
        '/word.log',
        '/empty.log',
        '/exponent.log',
        '/huge.log',
        '/bad-inode.log',
        '/not-an-object.log',
      ].map((path) => `warn dropping an invalid position ${path}`),
    );
    await positions.save();
    expect(JSON.parse(readFileSync(file, 'utf8')).files).toEqual({
      '/ok-number.log': { offset: '7', dev: '1', ino: '3' },
      '/ok.log': { offset: '42', dev: '1', ino: '2' },
    });
    expect(() => positions.set('/x.log', { offset: 1.5, dev: 1n, ino: 1n })).toThrow('invalid offset 1.5 for /x.log');
    expect(() => positions.set('/x.log', { offset: -1, dev: 1n, ino: 1n })).toThrow('invalid offset -1 for /x.log');
  });
});
