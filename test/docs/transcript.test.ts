import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BEGIN, END, README, generateTranscript, withTranscript } from '../../scripts/gen-transcript.js';

describe('README transcript', () => {
  it('is what the CLI prints today (run `npx tsx scripts/gen-transcript.ts` to update it)', async () => {
    const readme = readFileSync(README, 'utf8');
    expect(readme).toContain(BEGIN);
    expect(readme).toContain(END);
    expect(withTranscript(readme, await generateTranscript())).toBe(readme);
  });

  it('reports several errors at once, with suggestions, in the broken example', async () => {
    const readme = readFileSync(README, 'utf8');
    const section = readme.slice(readme.indexOf(BEGIN), readme.indexOf(END));
    expect(section.match(/^examples\/transcript\/broken\.alloy:\d+:\d+: /gm)).toHaveLength(4);
    expect(section.match(/did you mean/g)).toHaveLength(2);
  });
});
