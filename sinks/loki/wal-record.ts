/**
 * An accepted entry as a write-ahead record payload: what an endpoint needs to send it again
 * after a restart — its tenant (resolved when it was accepted), timestamp, labels, line and
 * structured metadata. The extracted map is not kept: it never leaves the pipeline.
 *
 * Layout (little-endian): version byte 1; tenant; timestamp as a signed 64-bit integer of
 * nanoseconds; label count (u32) and name/value pairs; line; metadata count (u32) and pairs. Each
 * string is its UTF-8 byte length (u32) followed by the bytes.
 */
import { Buffer } from 'node:buffer';
import type { Entry, Labels, MetadataPair } from '../../core/entry.js';

const VERSION = 1;

/** An entry and the tenant it is sent as. */
export interface WalEntry {
  readonly entry: Entry;
  readonly tenant: string;
}

export function encodeWalEntry(item: WalEntry): Buffer {
  const { entry, tenant } = item;
  const labelNames = Object.keys(entry.labels);
  let size = 1 + 4 + Buffer.byteLength(tenant) + 8 + 4 + 4 + Buffer.byteLength(entry.line) + 4;
  for (const name of labelNames) size += 8 + Buffer.byteLength(name) + Buffer.byteLength(entry.labels[name]!);
  for (const pair of entry.structuredMetadata) size += 8 + Buffer.byteLength(pair.name) + Buffer.byteLength(pair.value);
  const out = Buffer.allocUnsafe(size);
  let at = out.writeUInt8(VERSION, 0);
  const text = (value: string) => {
    const length = out.write(value, at + 4);
    out.writeUInt32LE(length, at);
    at += 4 + length;
  };
  text(tenant);
  at = out.writeBigInt64LE(entry.timestamp, at);
  at = out.writeUInt32LE(labelNames.length, at);
  for (const name of labelNames) {
    text(name);
    text(entry.labels[name]!);
  }
  text(entry.line);
  at = out.writeUInt32LE(entry.structuredMetadata.length, at);
  for (const pair of entry.structuredMetadata) {
    text(pair.name);
    text(pair.value);
  }
  return out;
}

/** Decodes a payload written by `encodeWalEntry`; throws on anything else. */
export function decodeWalEntry(payload: Buffer): WalEntry {
  let at = 0;
  const need = (bytes: number) => {
    if (at + bytes > payload.length) throw new Error('write-ahead record is truncated');
  };
  need(1);
  const version = payload.readUInt8(at++);
  if (version !== VERSION) throw new Error(`write-ahead record has unknown version ${version}`);
  const text = () => {
    need(4);
    const length = payload.readUInt32LE(at);
    need(4 + length);
    const value = payload.toString('utf8', at + 4, at + 4 + length);
    at += 4 + length;
    return value;
  };
  const count = () => {
    need(4);
    const n = payload.readUInt32LE(at);
    at += 4;
    return n;
  };
  const tenant = text();
  need(8);
  const timestamp = payload.readBigInt64LE(at);
  at += 8;
  const labels: Labels = {};
  for (let n = count(); n > 0; n--) {
    const name = text();
    labels[name] = text();
  }
  const line = text();
  const structuredMetadata: MetadataPair[] = [];
  for (let n = count(); n > 0; n--) structuredMetadata.push({ name: text(), value: text() });
  if (at !== payload.length) throw new Error('write-ahead record has trailing bytes');
  return { tenant, entry: { labels, line, timestamp, structuredMetadata, extracted: {} } };
}
