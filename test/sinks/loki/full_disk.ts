/**
 * A file system that runs out of space: files opened through `openFile` fail their writes with
 * ENOSPC, the error a full disk gives, once the files under `dir` would grow past `capBytes`. The
 * cap can be raised or lowered meanwhile, as space is taken or freed by others.
 */
import { readdirSync, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { OpenFile } from '../../../lib/wal/segment_log.js';

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
    bytes += entry.isDirectory() ? bytesUnder(path) : statSync(path).size;
  }
  return bytes;
}

export function fullDisk(dir: string, capBytes: number): FullDisk {
  let cap = capBytes;
  let refused = 0;
  const check = (bytes: number) => {
    if (bytesUnder(dir) + bytes <= cap) return;
    refused++;
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
  };
  const openFile: OpenFile = async (path, flags) => {
    const handle = await open(path, flags);
    return new Proxy(handle, {
      get(target, prop) {
        if (prop === 'writev') {
          return async (buffers: Buffer[], position?: number) => {
            check(buffers.reduce((sum, b) => sum + b.length, 0));
            return target.writev(buffers, position);
          };
        }
        if (prop === 'writeFile') {
          return async (data: string | Buffer) => {
            check(Buffer.byteLength(data));
            return target.writeFile(data);
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
