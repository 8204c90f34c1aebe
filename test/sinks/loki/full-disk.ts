/**
 * A file system that runs out of space, as a real one does: once the files under `dir` would grow
 * past `capBytes`, a write through a file opened with `openFile` puts down what still fits and
 * returns short, and a write with no room left fails with ENOSPC. The cap can be raised or
 * lowered meanwhile, as space is taken or freed by others.
 */
import { readdirSync, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { OpenFile } from '../../../lib/wal/segment-log.js';

export interface FullDisk {
  readonly openFile: OpenFile;
  /** Bytes of the files under the directory. */
  used(): number;
  setCap(bytes: number): void;
  /** Writes refused so far. */
  readonly refused: number;
}

function bytesUnder(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    // A file deleted or renamed since the listing takes no space.
    bytes += entry.isDirectory() ? bytesUnder(path) : (statSync(path, { throwIfNoEntry: false })?.size ?? 0);
  }
  return bytes;
}

export function fullDisk(dir: string, capBytes: number): FullDisk {
  let cap = capBytes;
  let refused = 0;
  /** Bytes a write of `bytes` may put down: all, what fits (a short write, as a filling disk does), or none (ENOSPC). */
  const room = (bytes: number): number => {
    const free = cap - bytesUnder(dir);
    if (free > 0) return Math.min(bytes, free);
    refused++;
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
  };
  const openFile: OpenFile = async (path, flags) => {
    const handle = await open(path, flags);
    return new Proxy(handle, {
      get(target, prop) {
        if (prop === 'writev') {
          return async (buffers: Buffer[]) => {
            const all = Buffer.concat(buffers);
            const { bytesWritten } = await target.write(all, 0, room(all.length));
            return { bytesWritten, buffers };
          };
        }
        if (prop === 'write') {
          return async (buffer: Buffer, offset = 0) => target.write(buffer, offset, room(buffer.length - offset));
        }
        if (prop === 'writeFile') {
          return async (data: string | Buffer) => {
            const buffer = Buffer.from(data);
            for (let at = 0; at < buffer.length; ) at += (await target.write(buffer, at, room(buffer.length - at))).bytesWritten;
          };
        }
        const value = Reflect.get(target, prop) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    }) as FileHandle;
  };
  return {
    openFile,
    used: () => bytesUnder(dir),
    setCap: (bytes) => {
      cap = bytes;
    },
    get refused() {
      return refused;
    },
  };
}
