import { describe, expect, it } from 'vitest';
import { render, renderError } from '../render.js';

describe('sprig integer arithmetic', () => {
  it.each([
    ['{{ add 7 3 }}|{{ add "5" 1 }}|{{ add 1.9 1.9 }}|{{ add }}', '10|6|2|0'],
    ['{{ add1 "1.00" }}|{{ sub 10 3.7 }}|{{ mul 2 3 4 }}|{{ div 7 2 }}|{{ div -7 2 }}|{{ mod -7 2 }}', '2|7|24|3|-3|-1'],
    ['{{ add "0x10" "017" "0b11" "1_000" }}', '1034'],
    ['{{ add "1.5" "abc" true }}', '1'],
    ['{{ add 9223372036854775807 1 }}', '-9223372036854775808'],
    ['{{ max 1 5 3 }}|{{ biggest 1 2 }}|{{ min 4 "2" }}|{{ max "x" -1 }}', '5|2|2|0'],
    ['{{ printf "%T %T %T" (add 1 2) (int "3") (int64 3) }}', 'int64 int int64'],
  ])('renders %j as %j', (template, want) => {
    expect(render(template)).toBe(want);
  });

  it('fails on division by zero', () => {
    expect(renderError('{{ div 1 0 }}')).toContain('error calling div: runtime error: integer divide by zero');
  });
});

describe('sprig float arithmetic', () => {
  it.each([
    ['{{ addf 0.1 0.2 }}|{{ add1f 1.5 }}|{{ subf 1 0.9 }}|{{ mulf 1.1 3 }}', '0.3|2.5|0.1|3.3'],
    ['{{ divf 10 3 }}|{{ divf 2 3 }}|{{ divf 1 8 }}', '3.3333333333333335|0.6666666666666667|0.125'],
    ['{{ maxf 1.5 2 "3.5" }}|{{ minf 1.5 -2 }}|{{ ceil 1.2 }}|{{ floor "1.8" }}', '3.5|-2|2|1'],
    ['{{ round 3.14159 2 }}|{{ round 2.5 0 }}|{{ round 2.4 0 0.3 }}|{{ round 1234.5678 -2 }}', '3.14|3|3|1200'],
    ['{{ printf "%T" (addf 1 2) }}|{{ addf 1 2 }}', 'float64|3'],
  ])('renders %j as %j', (template, want) => {
    expect(render(template)).toBe(want);
  });

  it('fails on float division by zero', () => {
    expect(renderError('{{ divf 1 0 }}')).toContain('error calling divf: decimal division by zero');
  });
});

describe('sprig conversions and sequences', () => {
  it.each([
    ['{{ atoi "12" }}|{{ atoi "x" }}|{{ atoi "99999999999999999999" }}', '12|0|9223372036854775807'],
    ['{{ int "0x10" }}|{{ int64 "5.000" }}|{{ int "5.5" }}|{{ int 3.99 }}|{{ int true }}', '16|5|0|3|1'],
    ['{{ float64 "1e3" }}|{{ float64 "0x1p-2" }}|{{ float64 "x" }}|{{ float64 3 }}', '1000|0.25|0|3'],
    ['{{ toDecimal "777" }}|{{ toDecimal 10 }}|{{ toDecimal "9" }}', '511|8|0'],
    [
      '{{ seq 5 }}|{{ seq -3 }}|{{ seq 2 -2 }}|{{ seq 0 2 10 }}|{{ seq 10 -3 0 }}|{{ seq 0 1 -3 }}|{{ seq }}',
      '1 2 3 4 5|1 0 -1 -2 -3|2 1 0 -1 -2|0 2 4 6 8 10|10 7 4 1||',
    ],
    [
      '{{ until 3 }}|{{ until -2 }}|{{ untilStep 0 10 3 }}|{{ untilStep 3 0 -1 }}|{{ untilStep 0 3 0 }}',
      '[0 1 2]|[0 -1]|[0 3 6 9]|[3 2 1]|[]',
    ],
    ['{{ range until 2 }}{{ printf "%T" . }}{{ end }}', 'intint'],
  ])('renders %j as %j', (template, want) => {
    expect(render(template)).toBe(want);
  });

  it('draws randInt within [min, max)', () => {
    for (let i = 0; i < 20; i++) {
      const n = Number(render('{{ randInt 3 6 }}'));
      expect(n).toBeGreaterThanOrEqual(3);
      expect(n).toBeLessThan(6);
    }
    expect(renderError('{{ randInt 5 5 }}')).toContain('error calling randInt: invalid argument to Intn');
  });
});
