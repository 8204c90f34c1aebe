import { beforeAll, describe, expect, it } from 'vitest';
import corpus from '../../fixtures/template/oracle-corpus.json';
import { loadOracle, ours, type OracleResult } from './oracle.js';

let oracle: (template: string, data: unknown) => OracleResult;

beforeAll(async () => {
  oracle = await loadOracle();
});

describe('the hand-written corpus against Go text/template', () => {
  it('holds at least 200 templates', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(200);
  });

  (corpus as [string, unknown][]).forEach(([template, data], i) => {
    it(`renders corpus template #${i} like Go: ${JSON.stringify(template).slice(0, 80)}`, () => {
      expect(ours(template, data)).toEqual(oracle(template, data));
    });
  });
});
