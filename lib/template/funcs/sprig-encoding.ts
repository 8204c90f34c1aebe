/**
 * sprig v3.3.0 base64/base32 functions with Go's standard encodings: decoding is as strict as
 * Go's (padding required, CR/LF ignored) and a bad input returns Go's error text as the result
 * (`illegal base64 data at input byte 4`), as sprig does.
 */
import { defineFunc, type FuncMap } from '../func.js';
import { T_STRING, utf8Bytes } from '../values.js';

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const decoder = new TextDecoder();

function decodeMap(alphabet: string): Int16Array {
  const map = new Int16Array(256).fill(-1);
  for (let i = 0; i < alphabet.length; i++) map[alphabet.charCodeAt(i)] = i;
  return map;
}

const B64_MAP = decodeMap(B64);
const B32_MAP = decodeMap(B32);

class CorruptInput extends Error {
  constructor(
    readonly offset: number,
    kind: string,
  ) {
    super(`illegal ${kind} data at input byte ${offset}`);
  }
}

/** Go's base64.StdEncoding.DecodeString. */
export function base64Decode(text: string): Uint8Array {
  const src = utf8Bytes(text);
  const out: number[] = [];
  let si = 0;
  for (;;) {
    const dbuf = [0, 0, 0, 0];
    let dlen = 4;
    let end = false;
    let j = 0;
    for (; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return new Uint8Array(out);
        throw new CorruptInput(si - j, 'base64');
      }
      const c = src[si]!;
      si++;
      const v = B64_MAP[c]!;
      if (v >= 0) {
        dbuf[j] = v;
        continue;
      }
      if (c === 0x0a || c === 0x0d) {
        j--;
        continue;
      }
      if (c !== 0x3d) throw new CorruptInput(si - 1, 'base64');
      if (j === 0 || j === 1) throw new CorruptInput(si - 1, 'base64');
      if (j === 2) {
        while (si < src.length && (src[si] === 0x0a || src[si] === 0x0d)) si++;
        if (si === src.length) throw new CorruptInput(src.length, 'base64');
        if (src[si] !== 0x3d) throw new CorruptInput(si - 1, 'base64');
        si++;
      }
      while (si < src.length && (src[si] === 0x0a || src[si] === 0x0d)) si++;
      if (si < src.length) throw new CorruptInput(si, 'base64');
      dlen = j;
      end = true;
      break;
    }
    const val = (dbuf[0]! << 18) | (dbuf[1]! << 12) | (dbuf[2]! << 6) | dbuf[3]!;
    const bytes = [(val >> 16) & 0xff, (val >> 8) & 0xff, val & 0xff];
    out.push(...bytes.slice(0, dlen - 1));
    if (end) return new Uint8Array(out);
  }
}

/** Go's base32.StdEncoding.DecodeString (newlines are removed first). */
export function base32Decode(text: string): Uint8Array {
  const src = utf8Bytes(text).filter((b) => b !== 0x0a && b !== 0x0d);
  const olen = src.length;
  const out: number[] = [];
  let pos = 0;
  let end = false;
  while (pos < src.length && !end) {
    const dbuf = new Array<number>(8).fill(0);
    let dlen = 8;
    for (let j = 0; j < 8; ) {
      if (pos === src.length) throw new CorruptInput(olen - (src.length - pos) - j, 'base32');
      const c = src[pos]!;
      pos++;
      const remaining = src.length - pos;
      if (c === 0x3d && j >= 2 && remaining < 8) {
        if (remaining + j < 7) throw new CorruptInput(olen, 'base32');
        for (let k = 0; k < 7 - j; k++) {
          if (remaining > k && src[pos + k] !== 0x3d) throw new CorruptInput(olen - remaining + k - 1, 'base32');
        }
        dlen = j;
        end = true;
        if (dlen === 1 || dlen === 3 || dlen === 6) throw new CorruptInput(olen - remaining - 1, 'base32');
        break;
      }
      const v = B32_MAP[c]!;
      if (v < 0) throw new CorruptInput(olen - remaining - 1, 'base32');
      dbuf[j] = v;
      j++;
    }
    const b = dbuf;
    const bytes = [
      ((b[0]! << 3) | (b[1]! >> 2)) & 0xff,
      ((b[1]! << 6) | (b[2]! << 1) | (b[3]! >> 4)) & 0xff,
      ((b[3]! << 4) | (b[4]! >> 1)) & 0xff,
      ((b[4]! << 7) | (b[5]! << 2) | (b[6]! >> 3)) & 0xff,
      ((b[6]! << 5) | b[7]!) & 0xff,
    ];
    const count = { 8: 5, 7: 4, 5: 3, 4: 2, 2: 1 }[dlen] ?? 0;
    out.push(...bytes.slice(0, count));
  }
  return new Uint8Array(out);
}

/** Go's base32.StdEncoding.EncodeToString. */
export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 5) {
    const chunk = bytes.subarray(i, i + 5);
    let bits = 0n;
    for (let k = 0; k < 5; k++) bits = (bits << 8n) | BigInt(chunk[k] ?? 0);
    const chars = Math.ceil((chunk.length * 8) / 5);
    for (let k = 0; k < 8; k++) {
      out += k < chars ? B32[Number((bits >> BigInt(35 - 5 * k)) & 31n)] : '=';
    }
  }
  return out;
}

function decodeOrError(decode: (s: string) => Uint8Array, s: string): string {
  try {
    return decoder.decode(decode(s));
  } catch (err) {
    return (err as Error).message;
  }
}

/** sprig's encoding functions. */
export const sprigEncodingFuncs: FuncMap = {
  b64enc: defineFunc([T_STRING], (v: string) => Buffer.from(utf8Bytes(v)).toString('base64')),
  b64dec: defineFunc([T_STRING], (v: string) => decodeOrError(base64Decode, v)),
  b32enc: defineFunc([T_STRING], (v: string) => base32Encode(utf8Bytes(v))),
  b32dec: defineFunc([T_STRING], (v: string) => decodeOrError(base32Decode, v)),
};
