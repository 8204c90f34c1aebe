import { describe, expect, it } from 'vitest';
import { render } from '../render.js';

// The suite runs with TZ=UTC (vitest.config.ts), so Local is UTC here.
describe('sprig dates', () => {
  it('formats Unix seconds and time values with Go layouts', () => {
    expect(render('{{ date "2006-01-02 15:04:05" 0 }}|{{ htmlDate 86400 }}|{{ dateInZone "15:04 MST" 0 "America/New_York" }}')).toBe(
      '1970-01-01 00:00:00|1970-01-02|19:00 EST',
    );
    expect(render('{{ dateInZone "15:04 MST" 0 "Nowhere/Zone" }}')).toBe('00:00 UTC');
  });

  it('formats anything else as the current time, as sprig does', () => {
    const year = String(new Date().getUTCFullYear());
    expect(render('{{ date "2006" "1999" }}|{{ date "2006" 1.5 }}')).toBe(`${year}|${year}`);
  });

  it('parses dates with toDate and reports failures through mustToDate', () => {
    expect(render('{{ toDate "2006-01-02" "2024-03-05" }}')).toBe('2024-03-05 00:00:00 +0000 UTC');
    expect(render('{{ toDate "2006" "bad" }}')).toBe('0001-01-01 00:00:00 +0000 UTC');
    expect(render('{{ unixEpoch (toDate "2006-01-02" "2024-03-05") }}')).toBe('1709596800');
    expect(render('{{ (toDate "2006-01-02T15:04:05Z07:00" "2024-03-05T10:00:00+02:00").Unix }}')).toBe('1709625600');
  });

  it('moves dates with dateModify', () => {
    expect(
      render('{{ dateModify "1h30m" (toDate "2006-01-02" "2024-03-05") }}|{{ dateModify "bad" (toDate "2006" "2024") | unixEpoch }}'),
    ).toBe('2024-03-05 01:30:00 +0000 UTC|1704067200');
  });

  it('formats durations: only int64 and strings count for duration', () => {
    expect(render('{{ duration "95" }}|{{ duration 95 }}|{{ duration (int64 3700) }}|{{ duration "x" }}')).toBe('1m35s|0s|1h1m40s|0s');
    expect(
      render('{{ durationRound "2h10m" }}|{{ durationRound "-75s" }}|{{ durationRound (int64 400000000000000000) }}|{{ durationRound 5 }}'),
    ).toBe('2h|1m|12y|0s');
  });

  it('prints now with a monotonic clock reading and measures ago', () => {
    expect(render('{{ now }}')).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)? \+0000 UTC m=\+\d+\.\d{9}$/);
    expect(render('{{ ago now }}|{{ ago (toDate "2006" "1") | len | lt 5 }}')).toBe('0s|true');
  });
});
