import { describe, it, expect } from 'vitest';
import { DataError } from '../../lib/data-error.js';
import { TimeParseError } from '../../lib/time/parse-error.js';

describe('DataError', () => {
  it('keeps its message and class but captures no stack frames, and leaves the stack limit as it was', () => {
    const limit = Error.stackTraceLimit;
    const err = new TimeParseError('parsing time "x" as "2006": cannot parse "x" as "2006"');
    expect(err).toBeInstanceOf(DataError);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('TimeParseError');
    expect(err.message).toBe('parsing time "x" as "2006": cannot parse "x" as "2006"');
    expect(err.stack).toBe('TimeParseError: parsing time "x" as "2006": cannot parse "x" as "2006"');
    expect(Error.stackTraceLimit).toBe(limit);
    expect(new Error('other').stack).toMatch(/\n\s+at /);
  });
});
