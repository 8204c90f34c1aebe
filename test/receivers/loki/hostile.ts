/**
 * Hostile push bodies for the push API tests: small on the wire, enormous once decoded.
 */
import { gzipSync } from 'node:zlib';
import { snappyEncode } from '../../../lib/loki/compression.js';

function varint(value: number): Buffer {
  const out: number[] = [];
  while (value >= 128) {
    out.push((value % 128) | 0x80);
    value = Math.floor(value / 128);
  }
  out.push(value);
  return Buffer.from(out);
}

/**
 * A snappy protobuf push of one stream holding `entries` empty entries (two bytes each on the
 * wire): 10.5 million of them are 20 MiB of protobuf in under 1 MiB of snappy.
 */
export function snappyEmptyEntriesBomb(entries = 10_500_000): Buffer {
  const body = Buffer.alloc(entries * 2);
  for (let i = 0; i < body.length; i += 2) body[i] = 0x12;
  return snappyEncode(Buffer.concat([Buffer.from([0x0a]), varint(body.length), body]));
}

/**
 * A gzipped JSON push of one stream holding `entries` entries of `["0",""]`: 5 million of them
 * are 45 MB of JSON in about 90 KiB of gzip.
 */
export function gzipJsonEntriesBomb(entries = 5_000_000): Buffer {
  const head = Buffer.from('{"streams":[{"stream":{"job":"bomb"},"values":[');
  const entry = Buffer.from('["0",""],');
  const body = Buffer.alloc(head.length + entries * entry.length + 4);
  head.copy(body, 0);
  for (let i = 0, at = head.length; i < entries; i++, at += entry.length) entry.copy(body, at);
  // The last entry's comma becomes the end of the document.
  body.write(']]}]}', head.length + entries * entry.length - 1);
  return gzipSync(body, { level: 9 });
}
