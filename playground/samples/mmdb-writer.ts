/**
 * A small MaxMind DB (MMDB v2) writer for the playground's sample databases (and the tests and
 * bench of stage.geoip): builds a database from a list of networks and their records, so no real
 * database has to be downloaded. It writes the binary search tree (IPv4 or IPv6, 24/28/32-bit
 * records; in an IPv6 tree IPv4 networks live under `::/96` where readers look for them), the
 * data section (maps, UTF-8 strings, doubles, floats, bytes, uint16/32/64/128, int32, booleans,
 * arrays; map keys repeated across records are written once and then referenced by pointers, as
 * real databases do) and the metadata section.
 *
 * @example
 * writeMmdb([{ network: '192.0.2.0/24', data: { city: { names: { en: 'London' } } } }], { databaseType: 'GeoIP2-City' })
 */
import { isIPv4, isIPv6 } from 'node:net';

/** A value with an explicit MMDB type; plain JS numbers are written as doubles. */
export class MmdbTyped {
  constructor(
    readonly type: 'uint16' | 'uint32' | 'uint64' | 'uint128' | 'int32' | 'float' | 'double' | 'bytes',
    readonly value: number | bigint | Uint8Array,
  ) {}
}

export type MmdbValue = string | number | boolean | MmdbTyped | readonly MmdbValue[] | { readonly [key: string]: MmdbValue };

/** Typed value constructors: `mmdb.uint32(1337)`, `mmdb.uint64(2n ** 40n)`. */
export const mmdb = {
  uint16: (n: number) => new MmdbTyped('uint16', n),
  uint32: (n: number) => new MmdbTyped('uint32', n),
  uint64: (n: bigint | number) => new MmdbTyped('uint64', BigInt(n)),
  uint128: (n: bigint | number) => new MmdbTyped('uint128', BigInt(n)),
  int32: (n: number) => new MmdbTyped('int32', n),
  float: (n: number) => new MmdbTyped('float', n),
  double: (n: number) => new MmdbTyped('double', n),
  bytes: (b: Uint8Array) => new MmdbTyped('bytes', b),
};

export interface MmdbNetwork {
  /** CIDR, `192.0.2.0/24` or `2001:db8::/32`; a bare address means a single host. */
  readonly network: string;
  readonly data: MmdbValue;
}

export interface MmdbOptions {
  readonly ipVersion?: 4 | 6;
  readonly recordSize?: 24 | 28 | 32;
  readonly databaseType?: string;
  readonly languages?: readonly string[];
  readonly description?: Readonly<Record<string, string>>;
  /** Seconds since the epoch. */
  readonly buildEpoch?: number;
}

type Child = TreeNode | { readonly data: number } | null;
interface TreeNode {
  left: Child;
  right: Child;
}

const METADATA_MARKER = Buffer.from([0xab, 0xcd, 0xef, ...Buffer.from('MaxMind.com', 'latin1')]);

/**
 * Writes a database. Later networks override earlier ones where they overlap (a more specific
 * network inside an earlier one splits it). Throws when an IPv6 network is given to an IPv4
 * database or when the tree does not fit the record size.
 */
export function writeMmdb(networks: readonly MmdbNetwork[], options: MmdbOptions = {}): Buffer {
  const ipVersion = options.ipVersion ?? 6;
  const recordSize = options.recordSize ?? 28;
  const data = new DataWriter();
  const root: TreeNode = { left: null, right: null };
  const offsets = new Map<string, number>();
  for (const { network, data: value } of networks) {
    const { bits, prefix } = networkBits(network, ipVersion);
    // Identical records share one copy in the data section.
    const key = JSON.stringify(value, (_k, v) =>
      typeof v === 'bigint' ? `${v}n` : v instanceof MmdbTyped ? { [v.type]: String(v.value) } : v,
    );
    let offset = offsets.get(key);
    if (offset === undefined) {
      offset = data.writeRecord(value);
      offsets.set(key, offset);
    }
    insert(root, bits, prefix, { data: offset });
  }

  const nodes = numberNodes(root);
  const nodeCount = nodes.length;
  const tree = Buffer.alloc((nodeCount * recordSize * 2) / 8);
  const maxRecord = 2 ** recordSize - 1;
  const recordValue = (child: Child): number => {
    const value = child === null ? nodeCount : 'data' in child ? nodeCount + 16 + child.data : nodes.indexOf(child);
    if (value > maxRecord) throw new Error(`record value ${value} does not fit in ${recordSize} bits`);
    return value;
  };
  nodes.forEach((node, i) => writeNode(tree, i, recordSize, recordValue(node.left), recordValue(node.right)));

  const metadata = new DataWriter(false);
  metadata.writeRecord({
    binary_format_major_version: mmdb.uint16(2),
    binary_format_minor_version: mmdb.uint16(0),
    build_epoch: mmdb.uint64(options.buildEpoch ?? 1_700_000_000),
    database_type: options.databaseType ?? 'Test',
    description: options.description ?? { en: 'Test database' },
    ip_version: mmdb.uint16(ipVersion),
    languages: [...(options.languages ?? ['en'])],
    node_count: mmdb.uint32(nodeCount),
    record_size: mmdb.uint16(recordSize),
  });
  return Buffer.concat([tree, Buffer.alloc(16), data.bytes(), METADATA_MARKER, metadata.bytes()]);
}

/** The network's address bits (32 or 128) and prefix length, placed in the database's tree. */
function networkBits(network: string, ipVersion: 4 | 6): { bits: number[]; prefix: number } {
  const [address = '', prefixText] = network.split('/');
  let bytes: number[];
  let prefix: number;
  if (isIPv4(address)) {
    bytes = address.split('.').map(Number);
    prefix = prefixText === undefined ? 32 : Number(prefixText);
    if (ipVersion === 6) {
      bytes = [...new Array<number>(12).fill(0), ...bytes];
      prefix += 96;
    }
  } else if (isIPv6(address)) {
    if (ipVersion === 4) throw new Error(`IPv6 network ${network} in an IPv4 database`);
    bytes = ipv6Bytes(address);
    prefix = prefixText === undefined ? 128 : Number(prefixText);
  } else {
    throw new Error(`not a network: ${network}`);
  }
  const bits: number[] = [];
  for (const byte of bytes) for (let b = 7; b >= 0; b--) bits.push((byte >> b) & 1);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits.length) throw new Error(`bad prefix length in ${network}`);
  return { bits, prefix };
}

function ipv6Bytes(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined
      ? headGroups
      : [...headGroups, ...new Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return groups.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
}

function insert(root: TreeNode, bits: readonly number[], prefix: number, leaf: Child): void {
  if (prefix === 0) throw new Error('a network of prefix length 0 cannot be stored');
  let node = root;
  for (let depth = 0; depth < prefix - 1; depth++) {
    const side = bits[depth] ? 'right' : 'left';
    let child = node[side];
    if (child === null || !('left' in child)) {
      // Descending through an existing leaf splits it: both halves keep its record.
      child = { left: child, right: child };
      node[side] = child;
    }
    node = child;
  }
  node[bits[prefix - 1] ? 'right' : 'left'] = leaf;
}

/** Nodes in breadth-first order; the root is node 0. */
function numberNodes(root: TreeNode): TreeNode[] {
  const nodes: TreeNode[] = [root];
  for (let i = 0; i < nodes.length; i++) {
    for (const child of [nodes[i]!.left, nodes[i]!.right]) if (child !== null && 'left' in child) nodes.push(child);
  }
  return nodes;
}

function writeNode(tree: Buffer, index: number, recordSize: number, left: number, right: number): void {
  const at = (index * recordSize * 2) / 8;
  if (recordSize === 24) {
    tree.writeUIntBE(left, at, 3);
    tree.writeUIntBE(right, at + 3, 3);
  } else if (recordSize === 28) {
    // The middle byte holds the top four bits of each record: left in the high nibble.
    tree.writeUIntBE(left & 0xffffff, at, 3);
    tree[at + 3] = ((left >>> 24) << 4) | (right >>> 24);
    tree.writeUIntBE(right & 0xffffff, at + 4, 3);
  } else {
    tree.writeUInt32BE(left, at);
    tree.writeUInt32BE(right, at + 4);
  }
}

const TYPE = {
  pointer: 1,
  utf8: 2,
  double: 3,
  bytes: 4,
  uint16: 5,
  uint32: 6,
  map: 7,
  int32: 8,
  uint64: 9,
  uint128: 10,
  array: 11,
  bool: 14,
  float: 15,
} as const;

/** Encodes values into one data section, remembering where each map key was first written. */
class DataWriter {
  private readonly chunks: Buffer[] = [];
  private length = 0;
  private readonly keyOffsets = new Map<string, number>();

  constructor(private readonly pointKeys = true) {}

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }

  /** Appends a value and returns its offset in the section. */
  writeRecord(value: MmdbValue): number {
    const offset = this.length;
    this.write(value);
    return offset;
  }

  private push(bytes: Buffer): void {
    this.chunks.push(bytes);
    this.length += bytes.length;
  }

  private control(type: number, size: number): void {
    const head: number[] = [];
    let sizeBits: number;
    const extra: number[] = [];
    if (size < 29) sizeBits = size;
    else if (size < 29 + 256) {
      sizeBits = 29;
      extra.push(size - 29);
    } else if (size < 285 + 65536) {
      sizeBits = 30;
      extra.push(((size - 285) >> 8) & 0xff, (size - 285) & 0xff);
    } else {
      sizeBits = 31;
      const rest = size - 65821;
      extra.push((rest >> 16) & 0xff, (rest >> 8) & 0xff, rest & 0xff);
    }
    if (type <= 7) head.push((type << 5) | sizeBits);
    else head.push(sizeBits, type - 7);
    this.push(Buffer.from([...head, ...extra]));
  }

  private write(value: MmdbValue): void {
    if (typeof value === 'string') return this.writeString(value);
    if (typeof value === 'number') return this.writeTyped(mmdb.double(value));
    if (typeof value === 'boolean') return this.control(TYPE.bool, value ? 1 : 0);
    if (value instanceof MmdbTyped) return this.writeTyped(value);
    if (Array.isArray(value)) {
      this.control(TYPE.array, value.length);
      for (const item of value) this.write(item);
      return;
    }
    const entries = Object.entries(value as Record<string, MmdbValue>);
    this.control(TYPE.map, entries.length);
    for (const [key, item] of entries) {
      this.writeKey(key);
      this.write(item);
    }
  }

  private writeKey(key: string): void {
    const seen = this.pointKeys ? this.keyOffsets.get(key) : undefined;
    if (seen !== undefined) return this.writePointer(seen);
    this.keyOffsets.set(key, this.length);
    this.writeString(key);
  }

  private writePointer(target: number): void {
    if (target < 2048) {
      this.push(Buffer.from([(TYPE.pointer << 5) | (target >> 8), target & 0xff]));
    } else if (target < 2048 + 524288) {
      const v = target - 2048;
      this.push(Buffer.from([(TYPE.pointer << 5) | (1 << 3) | (v >> 16), (v >> 8) & 0xff, v & 0xff]));
    } else if (target < 526336 + 134217728) {
      const v = target - 526336;
      this.push(Buffer.from([(TYPE.pointer << 5) | (2 << 3) | (v >> 24), (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff]));
    } else {
      const b = Buffer.alloc(5);
      b[0] = (TYPE.pointer << 5) | (3 << 3);
      b.writeUInt32BE(target, 1);
      this.push(b);
    }
  }

  private writeString(text: string): void {
    const bytes = Buffer.from(text, 'utf8');
    this.control(TYPE.utf8, bytes.length);
    this.push(bytes);
  }

  private writeTyped(typed: MmdbTyped): void {
    const { type, value } = typed;
    switch (type) {
      case 'double': {
        const b = Buffer.alloc(8);
        b.writeDoubleBE(value as number);
        this.control(TYPE.double, 8);
        return this.push(b);
      }
      case 'float': {
        const b = Buffer.alloc(4);
        b.writeFloatBE(value as number);
        this.control(TYPE.float, 4);
        return this.push(b);
      }
      case 'bytes':
        this.control(TYPE.bytes, (value as Uint8Array).length);
        return this.push(Buffer.from(value as Uint8Array));
      case 'int32': {
        const n = value as number;
        if (!Number.isInteger(n) || n < -(2 ** 31) || n >= 2 ** 31) throw new Error(`int32 out of range: ${n}`);
        // Negative numbers need all four bytes of two's complement; others use the fewest bytes.
        const bytes = n < 0 ? Buffer.from([(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]) : minimalBytes(BigInt(n));
        this.control(TYPE.int32, bytes.length);
        return this.push(bytes);
      }
      default: {
        const widths = { uint16: 2, uint32: 4, uint64: 8, uint128: 16 } as const;
        const n = BigInt(value as number | bigint);
        if (n < 0n || n >= 1n << BigInt(widths[type] * 8)) throw new Error(`${type} out of range: ${n}`);
        const bytes = minimalBytes(n);
        this.control(TYPE[type], bytes.length);
        return this.push(bytes);
      }
    }
  }
}

/** Big-endian bytes without leading zeros (zero is no bytes at all). */
function minimalBytes(n: bigint): Buffer {
  const out: number[] = [];
  for (let rest = n; rest > 0n; rest >>= 8n) out.unshift(Number(rest & 0xffn));
  return Buffer.from(out);
}
