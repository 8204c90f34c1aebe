import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import {
  amdahl,
  COSTS_BEGIN,
  COSTS_END,
  formatBeside,
  formatCores,
  formatCosts,
  replaceBetween,
  serialFraction,
  type CoresFigures,
} from '../../bench/reports.js';

const figures: CoresFigures = {
  entries: 100_000,
  workers: 2,
  cores: 2,
  wallSeconds: 0.8,
  cpuSeconds: 1.2,
  mainBusySeconds: 1.05,
  mainCpuSeconds: 0.996,
  threadBusySeconds: [0.15, 0.125],
  peakRssMiB: 181.6,
};

describe('cores report', () => {
  it('prints per-entry figures, the serial fraction and Amdahl projections', () => {
    expect(formatCores(figures).split('\n')).toEqual([
      'k8s end to end (logs.source.api → logs.process → logs.write), 100,000 entries, 2 pipeline threads, 2 cores',
      '',
      '| per entry | µs |',
      '|---|---:|',
      '| CPU, whole process (user + system) | 12.00 |',
      '| main thread busy (event-loop utilisation × wall) | 10.50 |',
      '| main thread CPU | 9.96 |',
      '| pipeline thread 1 busy | 1.50 |',
      '| pipeline thread 2 busy | 1.25 |',
      '| wall | 8.00 |',
      '',
      'serial fraction: 0.83',
      '(s = main thread CPU / process CPU)',
      'Amdahl projection 1 / (s + (1 − s)/N):',
      '  N = 2: 1.09×',
      '  N = 4: 1.15×',
      '  N = 8: 1.17×',
      '  N = 16: 1.19×',
      'peak RSS: 182 MiB',
    ]);
  });

  it('falls back to the event-loop busy time without the main thread CPU, and names no threads in place', () => {
    const lines = formatCores({ ...figures, workers: 1, mainCpuSeconds: undefined, threadBusySeconds: [], mainBusySeconds: 0.6 }).split(
      '\n',
    );
    expect(lines[0]).toBe(
      'k8s end to end (logs.source.api → logs.process → logs.write), 100,000 entries, stages in place (no pipeline threads), 2 cores',
    );
    expect(lines.filter((l) => l.startsWith('| pipeline thread') || l.startsWith('| main thread CPU'))).toEqual([]);
    expect(lines).toContain('serial fraction: 0.50');
    expect(lines).toContain('(s = main thread busy / process CPU)');
    expect(lines).toContain('  N = 2: 1.33×');
    expect(lines).toContain('  N = 16: 1.88×');
  });

  it('caps the serial fraction at 1 when wall-clock busy time exceeds the CPU time', () => {
    expect(serialFraction({ mainBusySeconds: 3, cpuSeconds: 1.5 })).toBe(1);
    expect(formatCores({ ...figures, mainCpuSeconds: undefined, mainBusySeconds: 5 })).toContain('serial fraction: 1.00\n');
    expect(amdahl(1, 16)).toBe(1);
    expect(amdahl(0, 8)).toBe(8);
    expect(amdahl(0.2, 8)).toBeCloseTo(1 / (0.2 + 0.1), 12);
  });
});

describe('cores report of a sharded instance', () => {
  it('names the shards and their threads, and compares CPU per entry and throughput with in place', () => {
    const sharded: CoresFigures = { ...figures, shards: 2, workers: 1, cpuSeconds: 1.5, mainCpuSeconds: 0.3, wallSeconds: 0.5 };
    const lines = formatCores(sharded).split('\n');
    expect(lines[0]).toBe(
      'k8s end to end (logs.source.api → logs.process → logs.write), 100,000 entries, 2 shards (decoding, stages and sending on shard threads), 2 cores',
    );
    expect(lines.filter((l) => l.includes('thread 1') || l.includes('thread 2'))).toEqual([
      '| shard thread 1 busy | 1.50 |',
      '| shard thread 2 busy | 1.25 |',
    ]);
    expect(lines).toContain('serial fraction: 0.20');
    const inPlace: CoresFigures = { ...figures, workers: 1, cpuSeconds: 1.2, wallSeconds: 0.8 };
    expect(formatBeside('2 shards', sharded, inPlace)).toBe('2 shards beside in place: CPU per entry 1.25×, throughput 1.60×');
  });
});

describe('costs report', () => {
  it('prints each part in µs with its share, and the total', () => {
    expect(
      formatCosts([
        { part: 'HTTP', seconds: 3e-6, method: 'A − decode' },
        { part: 'decode', seconds: 1.5e-6, method: 'decodePushBody alone' },
        { part: 'stage.cri', seconds: 0.5e-6, method: 'P1 − P0' },
      ]).split('\n'),
    ).toEqual([
      '| part | µs CPU per entry | share | measured as |',
      '|---|---:|---:|---|',
      '| HTTP | 3.00 | 60 % | A − decode |',
      '| decode | 1.50 | 30 % | decodePushBody alone |',
      '| stage.cri | 0.50 | 10 % | P1 − P0 |',
      '| total | 5.00 | 100 % | the whole pipeline |',
    ]);
  });
});

describe('replaceBetween', () => {
  it('replaces what lies between the two lines and keeps both', () => {
    expect(replaceBetween('a\n<b>\nold\n<e>\nz\n', '<b>', '<e>', 'new')).toBe('a\n<b>\nnew\n<e>\nz\n');
  });

  it('refuses a text where the end line comes before the begin line, or either is missing', () => {
    expect(() => replaceBetween('<e>\n<b>\n', '<b>', '<e>', 'x')).toThrow('the lines "<b>" and "<e>" are not both there, in that order');
    expect(() => replaceBetween('<b>\n', '<b>', '<e>', 'x')).toThrow('the lines "<b>" and "<e>" are not both there, in that order');
  });

  it('finds both of the README’s lines', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(replaceBetween(readme, COSTS_BEGIN, COSTS_END, 'x')).toContain(`${COSTS_BEGIN}\nx\n${COSTS_END}`);
  });
});
