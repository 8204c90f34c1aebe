import { describe, expect, it } from 'vitest';
import { firstHeader, headerValues } from '../../../receivers/http/headers.js';
import type { HttpRequest } from '../../../receivers/http/server.js';

const request = (rawHeaders: string[]) => ({ rawHeaders }) as unknown as HttpRequest;

describe('request headers from the raw list', () => {
  const req = request(['Host', 'x', 'Content-Type', 'a/b', 'X-Other', '1', 'content-TYPE', 'c/d', 'Content-Typo', 'e/f']);

  it('gives every value of a repeated header in order, whatever the case of its name', () => {
    expect(headerValues(req, 'content-type')).toEqual(['a/b', 'c/d']);
    expect(headerValues(req, 'missing')).toEqual([]);
  });

  it("gives the first value, as Go's Header.Get does", () => {
    expect(firstHeader(req, 'content-type')).toBe('a/b');
    expect(firstHeader(req, 'x-other')).toBe('1');
    expect(firstHeader(req, 'content-typ')).toBeUndefined();
  });
});
