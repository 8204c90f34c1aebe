import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../../lib/config/evaluate.js';
import { formatConfig, formatExpression } from '../../../lib/config/format.js';
import { parseConfig, parseExpression } from '../../../lib/config/parser.js';
import { ConfigError, ConfigErrors } from '../../../lib/config/errors.js';
import { configFile, expression, tokenText } from './arbitraries.js';
import { stripPositions } from './strip.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 150);

/** The line and column of `offset` in `text`, counting columns in characters (a leading BOM not counted). */
function lineCol(text: string, offset: number): { line: number; col: number } {
  const bom = text.startsWith('\ufeff') ? 1 : 0;
  const lines = text.slice(bom, Math.max(offset, bom)).split('\n');
  return { line: lines.length, col: [...lines[lines.length - 1]!].length + 1 };
}

/** Parses `text`; it must succeed or fail with ConfigErrors whose positions point into it. */
function parseOrCheckErrors(text: string): ReturnType<typeof parseConfig> | undefined {
  try {
    return parseConfig(text, 'soup.alloy');
  } catch (err) {
    if (!(err instanceof ConfigErrors)) throw err;
    expect(err.errors.length).toBeGreaterThan(0);
    for (const e of err.errors) {
      expect(e).toBeInstanceOf(ConfigError);
      const pos = e.pos!;
      expect(pos.file).toBe('soup.alloy');
      expect(pos.offset).toBeGreaterThanOrEqual(0);
      expect(pos.offset).toBeLessThanOrEqual(text.length);
      expect({ line: pos.line, col: pos.col }).toEqual(lineCol(text, pos.offset));
    }
    return undefined;
  }
}

function checkFormatting(file: ReturnType<typeof parseConfig>): void {
  const text = formatConfig(file);
  const again = parseConfig(text, file.file);
  expect(stripPositions(again)).toEqual(stripPositions(file));
  expect(formatConfig(again)).toBe(text);
}

describe('properties', () => {
  it('formatting any tree gives text that parses back to the same tree', () => {
    fc.assert(
      fc.property(configFile, (file) => {
        const text = formatConfig(file);
        expect(stripPositions(parseConfig(text, file.file))).toEqual(stripPositions(file));
      }),
      { numRuns },
    );
  });

  it('formatting is idempotent', () => {
    fc.assert(
      fc.property(configFile, (file) => {
        const once = formatConfig(file);
        expect(formatConfig(parseConfig(once, file.file))).toBe(once);
      }),
      { numRuns },
    );
  });

  it('formatting any expression gives text that parses back to it', () => {
    fc.assert(
      fc.property(expression, (expr) => {
        expect(stripPositions(parseExpression(formatExpression(expr), 'gen.alloy'))).toEqual(stripPositions(expr));
      }),
      { numRuns },
    );
  });

  it('keeps comments added anywhere between lines, and stays idempotent with them', () => {
    const comment = fc.constantFrom(' // note', ' /* note */', ' /* two\nlines */');
    const withComments = fc.tuple(configFile, fc.array(fc.tuple(fc.nat(), fc.boolean(), comment), { maxLength: 6 }));
    fc.assert(
      fc.property(withComments, ([file, edits]) => {
        const lines = formatConfig(file).split('\n');
        for (const [at, ownLine, text] of edits) {
          const i = at % lines.length;
          if (ownLine) lines.splice(i, 0, text.trim());
          // Anything after a line comment would be part of it.
          else if (!lines[i]!.includes('//')) lines[i] += text;
        }
        const commented = parseConfig(lines.join('\n'), file.file);
        expect(stripPositions(commented)).toEqual(stripPositions(file));
        const once = formatConfig(commented);
        const again = parseConfig(once, file.file);
        expect(stripPositions(again)).toEqual(stripPositions(file));
        expect(again.comments?.map((c) => c.text).sort()).toEqual(commented.comments?.map((c) => c.text).sort());
        expect(formatConfig(again)).toBe(once);
      }),
      { numRuns },
    );
  });

  it('evaluating any expression either gives a value or throws a positioned ConfigError', () => {
    const scope = { resolve: (path: readonly string[]) => (path[0] === 'a' ? { b: [1, 'x'] } : undefined), env: () => 'v' };
    fc.assert(
      fc.property(expression, (expr) => {
        try {
          evaluate(expr, scope);
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
          expect((err as ConfigError).pos).toBeDefined();
        }
      }),
      { numRuns },
    );
  });

  it('never throws anything but ConfigErrors on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 80 }), (text) => {
        const file = parseOrCheckErrors(text);
        if (file) checkFormatting(file);
      }),
      { numRuns },
    );
  });

  it('never throws anything but ConfigErrors on token soup', () => {
    const soup = fc
      .array(fc.tuple(tokenText, fc.constantFrom('', ' ', '\n', '  ')), { maxLength: 40 })
      .map((parts) => parts.map(([t, s]) => t + s).join(''));
    fc.assert(
      fc.property(soup, (text) => {
        const file = parseOrCheckErrors(text);
        if (file) checkFormatting(file);
      }),
      { numRuns: numRuns * 2 },
    );
  });

  it('never throws anything but ConfigErrors on damaged real configurations', () => {
    const real =
      'logs.process "default" {\n  forward_to = [loki.write.default.receiver]\n  stage.json {\n    expressions = { "app" = "", level = "lvl" } // c\n  }\n  stage.match {\n    selector = "{app=\\"x\\"}"\n    stage.drop { older_than = "1h" }\n  }\n}\n';
    const damage = fc.array(fc.tuple(fc.nat({ max: real.length }), fc.nat({ max: 3 }), tokenText), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(damage, (edits) => {
        let text = real;
        for (const [at, remove, insert] of edits) {
          const i = Math.min(at, text.length);
          text = text.slice(0, i) + insert + text.slice(i + remove);
        }
        const file = parseOrCheckErrors(text);
        if (file) checkFormatting(file);
      }),
      { numRuns },
    );
  });
});
