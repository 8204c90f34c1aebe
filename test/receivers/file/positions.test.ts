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
});
