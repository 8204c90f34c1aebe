/**
 * Minimal ASN.1 DER encoding and reading, enough to build X.509 certificates and DSA keys the
 * way Go's crypto/x509 and encoding/asn1 write them, and to read back a CA certificate.
 */

export type Der = Uint8Array;

function encodeLength(n: number): number[] {
  if (n < 0x80) return [n];
  const bytes: number[] = [];
  while (n > 0) {
    bytes.unshift(n & 0xff);
    n = Math.floor(n / 256);
  }
  return [0x80 | bytes.length, ...bytes];
}

/** A TLV with the given tag byte. */
export function tlv(tag: number, content: Uint8Array): Der {
  const head = [tag, ...encodeLength(content.length)];
  const out = new Uint8Array(head.length + content.length);
  out.set(head);
  out.set(content, head.length);
  return out;
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

export const sequence = (...items: Der[]): Der => tlv(0x30, concat(...items));
export const set = (...items: Der[]): Der => tlv(0x31, concat(...items));
export const explicit = (n: number, inner: Der): Der => tlv(0xa0 | n, inner);
export const octetString = (bytes: Uint8Array): Der => tlv(0x04, bytes);
export const nullValue = (): Der => new Uint8Array([0x05, 0x00]);
export const boolean = (v: boolean): Der => new Uint8Array([0x01, 0x01, v ? 0xff : 0x00]);

/** A BIT STRING with `unused` trailing bits in its last byte. */
export function bitString(bytes: Uint8Array, unused = 0): Der {
  return tlv(0x03, concat(new Uint8Array([unused]), bytes));
}

/** A non-negative INTEGER, minimal length. */
export function integer(value: bigint): Der {
  if (value < 0n) throw new RangeError('negative INTEGER');
  let hex = value.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  let bytes: Uint8Array = Buffer.from(hex, 'hex');
  if (bytes[0]! & 0x80) bytes = concat(new Uint8Array([0]), bytes);
  return tlv(0x02, bytes);
}

/** An OBJECT IDENTIFIER from dotted text. */
export function oid(dotted: string): Der {
  const arcs = dotted.split('.').map(BigInt);
  const body: number[] = [Number(arcs[0]! * 40n + arcs[1]!)];
  for (const arc of arcs.slice(2)) {
    const chunk: number[] = [];
    let v = arc;
    do {
      chunk.unshift(Number(v & 0x7fn));
      v >>= 7n;
    } while (v > 0n);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i]! |= 0x80;
    body.push(...chunk);
  }
  return tlv(0x06, new Uint8Array(body));
}

/** Go's asn1 string choice: PrintableString when possible, else UTF8String. */
export function directoryString(s: string): Der {
  const printable = /^[A-Za-z0-9 '()+,\-./:=?]*$/.test(s);
  return tlv(printable ? 0x13 : 0x0c, new TextEncoder().encode(s));
}

/** UTCTime for 1950–2049, GeneralizedTime otherwise (as Go encodes certificate validity). */
export function time(date: Date): Der {
  const y = date.getUTCFullYear();
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  const rest = `${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}Z`;
  if (y >= 1950 && y < 2050) return tlv(0x17, new TextEncoder().encode(pad(y % 100) + rest));
  return tlv(0x18, new TextEncoder().encode(pad(y, 4) + rest));
}

/** One decoded TLV: its tag, content and the whole encoding. */
export interface Node {
  readonly tag: number;
  readonly content: Uint8Array;
  readonly raw: Uint8Array;
}

/** Reads the TLV at `offset`. */
export function read(bytes: Uint8Array, offset = 0): Node & { readonly end: number } {
  const tag = bytes[offset]!;
  let len = bytes[offset + 1]!;
  let head = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + bytes[offset + 2 + i]!;
    head += n;
  }
  const start = offset + head;
  const end = start + len;
  if (end > bytes.length) throw new Error('asn1: truncated data');
  return { tag, content: bytes.subarray(start, end), raw: bytes.subarray(offset, end), end };
}

/** The children of a constructed value. */
export function children(node: Node): Node[] {
  const out: Node[] = [];
  let offset = 0;
  while (offset < node.content.length) {
    const child = read(node.content, offset);
    out.push(child);
    offset = child.end;
  }
  return out;
}

/** An INTEGER's value. */
export function integerValue(node: Node): bigint {
  let v = 0n;
  for (const b of node.content) v = (v << 8n) | BigInt(b);
  if (node.content.length > 0 && node.content[0]! & 0x80) v -= 1n << BigInt(node.content.length * 8);
  return v;
}
