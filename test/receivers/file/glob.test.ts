import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expandBraces, globFiles, matchPath, matchSegment } from '../../../receivers/file/glob.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);

describe('glob matching', () => {
  it('matches *, ? and classes within one segment', () => {
    expect(matchSegment('*.log', 'app.log')).toBe(true);
    expect(matchSegment('*.log', '.hidden.log')).toBe(true);
    expect(matchSegment('*.log', 'app.log.1')).toBe(false);
    expect(matchSegment('app-?.log', 'app-1.log')).toBe(true);
    expect(matchSegment('app-?.log', 'app-12.log')).toBe(false);
    expect(matchSegment('[a-c]x[!0-9]', 'bxz')).toBe(true);
    expect(matchSegment('[a-c]x[!0-9]', 'bx5')).toBe(false);
    expect(matchSegment('[^a]', 'b')).toBe(true);
    expect(matchSegment('a\\*b', 'a*b')).toBe(true);
    expect(matchSegment('a\\*b', 'axb')).toBe(false);
    expect(matchSegment('*a*b*c', 'xxaxxbxxc')).toBe(true);
  });

  it('spans directories only with **', () => {
    expect(matchPath('/var/log/**/*.log', '/var/log/a.log')).toBe(true);
    expect(matchPath('/var/log/**/*.log', '/var/log/x/y/a.log')).toBe(true);
    expect(matchPath('/var/log/*.log', '/var/log/x/a.log')).toBe(false);
    expect(matchPath('/var/log/{app,db}/*.log', '/var/log/db/a.log')).toBe(true);
  });

  it('expands nested brace alternatives', () => {
    expect(expandBraces('a{b,c{d,e}}f')).toEqual(['abf', 'acdf', 'acef']);
    expect(expandBraces('\\{a,b}')).toEqual(['\\{a,b}']);
  });

  it('matches any name against a pattern of that name escaped, and only that name', () => {
    const name = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !s.includes('/'));
    fc.assert(
      fc.property(name, name, (a, b) => {
        const escaped = a.replace(/[*?[\]{}\\]/g, '\\$&');
        expect(matchSegment(escaped, a)).toBe(true);
        expect(matchSegment(escaped, b)).toBe(a === b);
        expect(matchSegment('*', b)).toBe(true);
      }),
      { numRuns },
    );
  });

  it('finds the regular files a glob names, sorted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-glob-'));
    mkdirSync(join(dir, 'a', 'b'), { recursive: true });
    for (const f of ['x.log', 'a/y.log', 'a/b/z.log', 'a/b/z.txt']) writeFileSync(join(dir, f), '');
    expect(await globFiles(join(dir, '**/*.log'))).toEqual([join(dir, 'a/b/z.log'), join(dir, 'a/y.log'), join(dir, 'x.log')]);
    expect(await globFiles(join(dir, 'a/*'))).toEqual([join(dir, 'a/y.log')]);
    expect(await globFiles(join(dir, 'missing.log'))).toEqual([]);
    expect(await globFiles(join(dir, '{x,nothing}.log'))).toEqual([join(dir, 'x.log')]);
  });
});
