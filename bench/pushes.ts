/**
 * What the end-to-end benches share: Loki push bodies built ahead of time, and a push endpoint
 * that decodes what arrives and counts its entries.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { snappyDecode, snappyEncode } from '../lib/loki/compression.js';
import { decodePushRequest, encodePushRequest, type WireStream } from '../lib/loki/wire.js';

const BASE_NS = 1_714_557_600_000_000_000n;

export interface PushWorkload {
  readonly bodies: Buffer[];
  readonly entries: number;
  readonly lineBytes: number;
}

/**
 * Snappy protobuf pushes of `perPush` entries spread evenly over `pods` streams; entry `seq` of
 * pod `p` has the line `line(seq, p)`, timestamps one nanosecond apart.
 */
export function pushWorkload(options: {
  readonly entries: number;
  readonly pods: number;
  readonly perPush: number;
  readonly labels: (pod: number) => string;
  readonly line: (seq: number, pod: number) => string;
}): PushWorkload {
  const { entries: total, pods, perPush, labels, line } = options;
  const bodies: Buffer[] = [];
  let lineBytes = 0;
  const perPod = perPush / pods;
  for (let from = 0; from < total / pods; from += perPod) {
    const streams: WireStream[] = [];
    for (let p = 0; p < pods; p++) {
      const entries = [];
      for (let seq = from; seq < from + perPod; seq++) {
        const text = line(seq, p);
        lineBytes += Buffer.byteLength(text);
        entries.push({ timestampNs: BASE_NS + BigInt(seq), line: text, structuredMetadata: [] });
      }
      streams.push({ labels: labels(p), entries });
    }
    bodies.push(snappyEncode(encodePushRequest(streams)));
  }
  return { bodies, entries: total, lineBytes };
}

/** A push endpoint that decodes every body and counts its entries. */
export interface CountingSink {
  readonly server: Server;
  readonly url: string;
  entries(): number;
  reset(): void;
}

/** Starts a CountingSink on loopback. */
export async function countingSink(): Promise<CountingSink> {
  let entries = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      for (const stream of decodePushRequest(snappyDecode(Buffer.concat(chunks), 1 << 30))) entries += stream.entries.length;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, url: `http://127.0.0.1:${port}/loki/api/v1/push`, entries: () => entries, reset: () => (entries = 0) };
}
