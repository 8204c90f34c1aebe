import { describe, expect, it } from 'vitest';
import templateCases from '../../fixtures/template/conformance-template.json';
import replaceCases from '../../fixtures/template/conformance-replace.json';
import { buildPipeline, run } from './mini-pipeline.js';

interface Case {
  readonly name: string;
  readonly config: string;
  readonly input: { labels: Record<string, string>; line: string; extracted?: Record<string, unknown> }[];
  readonly expected: unknown;
}

interface ExpectedEntry {
  readonly labels?: Record<string, string>;
  readonly line?: string;
  readonly extracted?: Record<string, unknown>;
  readonly extracted_exact?: boolean;
  readonly extracted_absent?: string[];
}

function check(c: Case): void {
  const invalid = (c.expected as { error?: string }).error === 'config invalid';
  if (invalid) {
    expect(() => buildPipeline(c.config)).toThrow();
    return;
  }
  const stages = buildPipeline(c.config);
  const expected = c.expected as ExpectedEntry[];
  c.input.forEach((input, i) => {
    const got = run(stages, input);
    const want = expected[i]!;
    if (want.labels !== undefined) expect(got.labels).toEqual(want.labels);
    if (want.line !== undefined) expect(got.line).toBe(want.line);
    if (want.extracted !== undefined) {
      if (want.extracted_exact === true) expect(got.extracted).toEqual(want.extracted);
      else expect(got.extracted).toMatchObject(want.extracted);
    }
    for (const key of want.extracted_absent ?? []) expect(got.extracted).not.toHaveProperty(key);
  });
}

describe('templates of the stage.template conformance vectors', () => {
  for (const c of templateCases as Case[]) {
    it(`renders as expected: ${c.name}`, () => check(c));
  }
});

describe('templates of the stage.replace conformance vectors', () => {
  for (const c of replaceCases as Case[]) {
    it(`renders as expected: ${c.name}`, () => check(c));
  }
});
