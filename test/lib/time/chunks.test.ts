import { describe, expect, it } from 'vitest';
import { Std, layoutSteps, stepsHaveYear, type StdKind } from '../../../lib/time/chunks.js';

const STD_NAMES = new Map<number, string>(Object.entries(Std).map(([name, value]) => [value, name]));

/** The layout with every chunk wrapped in parentheses, as Go's own nextStdChunk test marks them. */
function markChunks(layout: string): string {
  return layoutSteps(layout)
    .map((s) => s.prefix + (s.std === 0 ? '' : `(${s.text})`))
    .join('');
}

function kinds(layout: string): string[] {
  return layoutSteps(layout)
    .filter((s) => s.std !== 0)
    .map((s) => STD_NAMES.get(s.std as StdKind)!);
}

describe('layoutSteps', () => {
  it.each([
    '(2006)-(01)-(02)T(15):(04):(05)(Z07:00)',
    '(2006)-(01)-(02) (002) (15):(04):(05)',
    '(2006)-(01) (002) (15):(04):(05)',
    '(2006)-(002) (15):(04):(05)',
    '(2006)(002)(01) (15):(04):(05)',
    '(2006)(002)(04) (15):(04):(05)',
  ])('finds the chunk boundaries of %s', (marked) => {
    expect(markChunks(marked.replace(/[()]/g, ''))).toBe(marked);
  });

  it.each([
    ['January', 'LongMonth'],
    ['Jan', 'Month'],
    ['1', 'NumMonth'],
    ['01', 'ZeroMonth'],
    ['Monday', 'LongWeekDay'],
    ['Mon', 'WeekDay'],
    ['2', 'Day'],
    ['_2', 'UnderDay'],
    ['02', 'ZeroDay'],
    ['__2', 'UnderYearDay'],
    ['002', 'ZeroYearDay'],
    ['15', 'Hour'],
    ['3', 'Hour12'],
    ['03', 'ZeroHour12'],
    ['4', 'Minute'],
    ['04', 'ZeroMinute'],
    ['5', 'Second'],
    ['05', 'ZeroSecond'],
    ['2006', 'LongYear'],
    ['06', 'Year'],
    ['PM', 'PM'],
    ['pm', 'pm'],
    ['MST', 'TZ'],
    ['Z0700', 'ISO8601TZ'],
    ['Z070000', 'ISO8601SecondsTZ'],
    ['Z07', 'ISO8601ShortTZ'],
    ['Z07:00', 'ISO8601ColonTZ'],
    ['Z07:00:00', 'ISO8601ColonSecondsTZ'],
    ['-0700', 'NumTZ'],
    ['-070000', 'NumSecondsTZ'],
    ['-07', 'NumShortTZ'],
    ['-07:00', 'NumColonTZ'],
    ['-07:00:00', 'NumColonSecondsTZ'],
    ['.000', 'FracSecond0'],
    [',000', 'FracSecond0'],
    ['.999', 'FracSecond9'],
    [',999', 'FracSecond9'],
  ])('reads %s as the %s chunk', (layout, kind) => {
    const steps = layoutSteps(layout);
    expect(steps).toHaveLength(2);
    expect(steps[0]).toMatchObject({ prefix: '', text: layout });
    expect(STD_NAMES.get(steps[0]!.std)).toBe(kind);
    expect(steps[1]).toMatchObject({ prefix: '', std: 0 });
  });

  it('does not take Jan or Mon followed by a lower-case letter as a chunk', () => {
    expect(markChunks('Hi Janet, the Month is January')).toBe('Hi Janet, the Month is (January)');
    expect(kinds('Jan2')).toEqual(['Month', 'Day']);
    expect(kinds('JanX')).toEqual(['Month']);
    expect(kinds('Monx Mon.')).toEqual(['WeekDay']);
  });

  it('reads _2006 as a literal underscore and the long year', () => {
    const steps = layoutSteps('15:04_20060102');
    expect(markChunks('15:04_20060102')).toBe('(15):(04)_(2006)(01)(02)');
    expect(steps[2]).toMatchObject({ prefix: '_', text: '2006', std: Std.LongYear });
  });

  it('takes the longest numeric zone form first', () => {
    expect(kinds('-07:00:00 -070000 -0700 -07:00 -07')).toEqual(['NumColonSecondsTZ', 'NumSecondsTZ', 'NumTZ', 'NumColonTZ', 'NumShortTZ']);
    expect(kinds('Z07:00:00 Z070000 Z0700 Z07:00 Z07')).toEqual([
      'ISO8601ColonSecondsTZ',
      'ISO8601SecondsTZ',
      'ISO8601TZ',
      'ISO8601ColonTZ',
      'ISO8601ShortTZ',
    ]);
  });

  it('records the digit count and separator of fractions', () => {
    const [frac] = layoutSteps(',999999').filter((s) => s.std !== 0);
    expect(frac).toMatchObject({ std: Std.FracSecond9, digits: 6, separator: ',' });
  });

  it('does not take a run of zeros followed by another digit as a fraction', () => {
    expect(markChunks('05.0001')).toBe('(05).00(01)');
    expect(markChunks('2006.01.02.15.04.05.00')).toBe('(2006).(01).(02).(15).(04).(05)(.00)');
  });

  it('keeps other text literal, case-sensitively', () => {
    expect(markChunks('T t Z z M mst MST P pM')).toBe('T t Z z M mst (MST) P pM');
    expect(markChunks('')).toBe('');
  });

  it('reads every digit 1–5 on its own as a chunk', () => {
    expect(kinds('1 2 3 4 5')).toEqual(['NumMonth', 'Day', 'Hour12', 'Minute', 'Second']);
    expect(kinds('7 8 9 0')).toEqual([]);
  });

  it('tells whether a layout has a year', () => {
    expect(stepsHaveYear(layoutSteps('Jan 02 15:04:05'))).toBe(false);
    expect(stepsHaveYear(layoutSteps('02 Jan 06'))).toBe(true);
    expect(stepsHaveYear(layoutSteps('2006'))).toBe(true);
  });
});
