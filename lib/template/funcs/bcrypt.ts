/**
 * bcrypt as Go's golang.org/x/crypto/bcrypt writes it (`$2a$`, cost 10 by default), built on
 * an Eksblowfish implementation. Blowfish's initial P-array and S-boxes are the hexadecimal
 * digits of π; they are computed once on first use instead of being shipped as a table.
 *
 * Why not the maintained bcryptjs: a render's time budget stops bcrypt between its key-expansion
 * rounds (`betweenRounds`), and bcryptjs's synchronous `hashSync` runs all 2^cost rounds with no
 * hook (its progress callback exists only on the asynchronous path, and a render is synchronous).
 * bcryptjs is this code's test oracle instead: the tests hold both to the same hashes.
 */
import { randomBytes } from 'node:crypto';
import { GoError } from '../errors.js';

const P_WORDS = 18;
const S_WORDS = 4 * 256;

let piWords: Uint32Array | undefined;

/** The first 1042 32-bit words of π's fractional part, by Machin's formula in fixed point. */
function blowfishConstants(): Uint32Array {
  if (piWords !== undefined) return piWords;
  const wordBits = (P_WORDS + S_WORDS) * 32;
  const precision = BigInt(wordBits + 64);
  const one = 1n << precision;
  const arctanInverse = (x: bigint): bigint => {
    const x2 = x * x;
    let term = one / x;
    let sum = term;
    for (let k = 1n; term !== 0n; k++) {
      term /= x2;
      const part = term / (2n * k + 1n);
      sum += k % 2n === 1n ? -part : part;
    }
    return sum;
  };
  const pi = 16n * arctanInverse(5n) - 4n * arctanInverse(239n);
  const fraction = (pi - 3n * one) >> 64n;
  const words = new Uint32Array(P_WORDS + S_WORDS);
  for (let i = 0; i < words.length; i++) {
    words[i] = Number((fraction >> BigInt(wordBits - 32 * (i + 1))) & 0xffffffffn);
  }
  piWords = words;
  return words;
}

class Blowfish {
  readonly p: Uint32Array;
  readonly s: Uint32Array;
  /** Output of the last encryptBlock call (kept in fields to avoid allocating pairs). */
  l = 0;
  r = 0;

  constructor() {
    const init = blowfishConstants();
    this.p = init.slice(0, P_WORDS);
    this.s = init.slice(P_WORDS);
  }

  /** Encrypts one block; the result is left in `l` and `r`. */
  encryptBlock(l: number, r: number): void {
    const p = this.p;
    const s = this.s;
    let xl = (l ^ p[0]!) >>> 0;
    let xr = r >>> 0;
    for (let i = 1; i <= 16; i += 2) {
      let f = (((s[xl >>> 24]! + s[256 + ((xl >>> 16) & 0xff)]!) ^ s[512 + ((xl >>> 8) & 0xff)]!) + s[768 + (xl & 0xff)]!) >>> 0;
      xr = (xr ^ f ^ p[i]!) >>> 0;
      f = (((s[xr >>> 24]! + s[256 + ((xr >>> 16) & 0xff)]!) ^ s[512 + ((xr >>> 8) & 0xff)]!) + s[768 + (xr & 0xff)]!) >>> 0;
      xl = (xl ^ f ^ p[i + 1]!) >>> 0;
    }
    this.l = (xr ^ p[17]!) >>> 0;
    this.r = xl;
  }

  /** Blowfish ExpandKey (no salt) or bcrypt's expandKeyWithSalt. */
  expand(key: Uint8Array, salt?: Uint8Array): void {
    const p = this.p;
    let j = 0;
    for (let i = 0; i < P_WORDS; i++) {
      let w = 0;
      for (let k = 0; k < 4; k++) {
        w = ((w << 8) | key[j]!) >>> 0;
        j = j + 1 === key.length ? 0 : j + 1;
      }
      p[i] = (p[i]! ^ w) >>> 0;
    }
    let saltPos = 0;
    const saltWord = (): number => {
      let w = 0;
      for (let k = 0; k < 4; k++) {
        w = ((w << 8) | salt![saltPos]!) >>> 0;
        saltPos = saltPos + 1 === salt!.length ? 0 : saltPos + 1;
      }
      return w;
    };
    this.l = 0;
    this.r = 0;
    const fill = (arr: Uint32Array, count: number): void => {
      for (let i = 0; i < count; i += 2) {
        if (salt === undefined) this.encryptBlock(this.l, this.r);
        else this.encryptBlock(this.l ^ saltWord(), this.r ^ saltWord());
        arr[i] = this.l;
        arr[i + 1] = this.r;
      }
    };
    fill(p, P_WORDS);
    fill(this.s, S_WORDS);
  }
}

const BCRYPT_ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const STD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function bcryptBase64(bytes: Uint8Array): string {
  const std = Buffer.from(bytes).toString('base64').replace(/=+$/, '');
  let out = '';
  for (const c of std) out += BCRYPT_ALPHABET[STD_ALPHABET.indexOf(c)];
  return out;
}

const MAGIC = new TextEncoder().encode('OrpheanBeholderScryDoubt');

/**
 * Go's bcrypt.GenerateFromPassword(password, cost). `betweenRounds` runs before each of the
 * 2^cost key expansions (a render checks its time there) and may throw to stop.
 */
export function bcryptHash(
  password: Uint8Array,
  cost = 10,
  salt: Uint8Array = randomBytes(16),
  betweenRounds: () => void = () => {},
): string {
  if (password.length > 72) throw new GoError('bcrypt: password length exceeds 72 bytes');
  const key = new Uint8Array(password.length + 1);
  key.set(password);
  const c = new Blowfish();
  c.expand(key, salt);
  const rounds = 1 << cost;
  for (let i = 0; i < rounds; i++) {
    betweenRounds();
    c.expand(key);
    c.expand(salt);
  }
  const data = new DataView(MAGIC.slice().buffer);
  for (let i = 0; i < 24; i += 8) {
    c.l = data.getUint32(i);
    c.r = data.getUint32(i + 4);
    for (let j = 0; j < 64; j++) c.encryptBlock(c.l, c.r);
    data.setUint32(i, c.l);
    data.setUint32(i + 4, c.r);
  }
  const hash = new Uint8Array(data.buffer).subarray(0, 23);
  return `$2a$${String(cost).padStart(2, '0')}$${bcryptBase64(salt)}${bcryptBase64(hash)}`;
}
