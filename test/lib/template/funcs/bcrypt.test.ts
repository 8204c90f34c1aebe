import { compareSync, encodeBase64, hashSync } from 'bcryptjs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bcryptHash } from '../../../../lib/template/funcs/bcrypt.js';
import { render } from '../render.js';

// The maintained bcryptjs is the oracle: the template engine keeps its own bcrypt only for the
// hook between rounds that a render's time budget needs (see lib/template/funcs/bcrypt.ts).
const passwordsBcryptAccepts = fc.string({ unit: 'binary', maxLength: 72 }).filter((s) => Buffer.byteLength(s) <= 72);
const salts = fc.uint8Array({ minLength: 16, maxLength: 16 });

describe('bcryptHash against bcryptjs', () => {
  it('hashes any password of at most 72 bytes as bcryptjs does, for the same salt and cost', () => {
    fc.assert(
      fc.property(passwordsBcryptAccepts, salts, fc.integer({ min: 4, max: 5 }), (password, salt, cost) => {
        const setting = `$2a$0${cost}$${encodeBase64(salt, 16)}`;
        expect(bcryptHash(new TextEncoder().encode(password), cost, salt)).toBe(hashSync(password, setting));
      }),
      { numRuns: 40 },
    );
  });

  it('writes hashes of cost 10 that bcryptjs verifies', () => {
    const hash = render('{{ bcrypt "correct horse" }}');
    expect(compareSync('correct horse', hash)).toBe(true);
    expect(compareSync('correct horsf', hash)).toBe(false);
  });
});
