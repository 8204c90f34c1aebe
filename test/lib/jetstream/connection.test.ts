import { describe, expect, it } from 'vitest';
import { takesTermReasons } from '../../../lib/jetstream/connection.js';

describe('takesTermReasons', () => {
  it('is true from server 2.10 on, when the server reads a reason after +TERM', () => {
    expect(['2.9.10', '2.10.0', '2.11.3', '3.0.0', '1.12.0', '', undefined].map((v) => takesTermReasons(v))).toEqual([
      false,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });
});
