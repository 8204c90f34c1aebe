/**
 * The `wal` block of logs.write: a write-ahead log on disk per endpoint, so an acknowledged entry
 * survives the process being killed and is sent after the next start. Named after the reference
 * family's WAL (`enabled`) and Vector's disk buffers (`max_size`).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { ConfigError } from '../../lib/config/errors.js';
import { attributePos, nestedBlocks, t, type BlockValues, type Checks, type NestedBlockSpec } from '../../lib/config/schema.js';

export interface WalConfig {
  readonly dir: string;
  readonly maxBytes: number;
  /** Flush each accepted batch to the device before acknowledging it. */
  readonly fsync: boolean;
}

export const walBlockSpec = {
  doc: 'A write-ahead log on disk: entries are acknowledged once written there and sent from there, so they survive a crash or a restart.',
  fields: {
    enabled: { kind: t.bool, default: false, doc: 'Keep accepted entries on disk until they are delivered.' },
    dir: {
      kind: t.string,
      default: '',
      doc: 'Directory of the log, required when enabled. Each endpoint keeps its own subdirectory, named after the endpoint’s `name`, or a hash of its `url` without one.',
    },
    max_size: {
      kind: t.bytes,
      min: 1,
      default: '1GiB',
      doc: 'Most bytes of log files per endpoint. When reached, senders wait (a push source answers 429) until delivered segments are deleted.',
    },
    fsync: {
      kind: t.string,
      default: 'always',
      oneOf: ['always', 'never'],
      doc: '`always`: each accepted batch is flushed to the device before it is acknowledged, so it survives a power loss. `never`: acknowledged once the operating system has it, which survives the process being killed but not the machine stopping.',
    },
  },
} satisfies NestedBlockSpec;

/** A decoded `wal` block. */
export type WalValues = BlockValues<typeof walBlockSpec>;

/**
 * The decoded `wal` block, or undefined when absent or not enabled (or, reported, enabled without
 * a directory). Each of `endpoints` must get a log directory of its own.
 */
export function resolveWal(
  values: WalValues | undefined,
  endpoints: readonly { readonly name: string; readonly url: string }[],
  checks: Checks,
): WalConfig | undefined {
  if (!values?.enabled) return undefined;
  const walBlock = nestedBlocks(checks.block, 'wal')[0];
  const at = [...checks.path, 'wal'];
  if (values.dir === '') {
    checks.report(new ConfigError('dir must be set when the wal is enabled', attributePos(walBlock, 'enabled'), at));
    return undefined;
  }
  const wal = { dir: values.dir, maxBytes: values.max_size, fsync: values.fsync === 'always' };
  const dirs = endpoints.map((e) => endpointWalDir(wal, e));
  const shared = dirs.find((dir, i) => dirs.indexOf(dir) !== i);
  if (shared !== undefined)
    checks.report(new ConfigError(`two endpoints would share the write-ahead log ${shared}; give them distinct names`, walBlock?.pos, at));
  return wal;
}

/** The directory of one endpoint's log: its name, made safe for a file name, else a hash of its url. */
export function endpointWalDir(wal: WalConfig, endpoint: { readonly name: string; readonly url: string }): string {
  const name = endpoint.name.replace(/[^A-Za-z0-9._-]/g, '_');
  const key =
    name !== '' && name !== '.' && name !== '..' ? name : `url-${createHash('sha256').update(endpoint.url).digest('hex').slice(0, 16)}`;
  return join(wal.dir, key);
}
