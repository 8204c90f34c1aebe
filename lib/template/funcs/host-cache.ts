/**
 * The name cache behind `getHostByName`. Templates render synchronously and Node resolves names
 * only asynchronously, so a render reads what the cache knows and never waits: a name it does not
 * know yet, or knows from an expired answer, gets a lookup started in the background, and the
 * renders after that lookup settles read its answer.
 */

/** Resolves a host name to its addresses; an empty list (or a rejection) means it does not resolve. */
export type HostResolver = (name: string) => Promise<readonly string[]>;

export interface HostCacheOptions {
  readonly resolve: HostResolver;
  /** Milliseconds on a monotonic or wall clock; injectable for tests. */
  readonly now?: () => number;
  /** How long a name that resolved is answered from the cache. */
  readonly positiveTtlMs?: number;
  /** How long a name that did not resolve is answered from the cache. */
  readonly negativeTtlMs?: number;
  /** Names kept; the least recently used goes first. */
  readonly maxNames?: number;
  /** Lookups in flight at once (Node runs them on its small thread pool, shared with file I/O). */
  readonly maxLookups?: number;
}

interface CachedHost {
  /** The last answer (empty: did not resolve), or undefined before the first one. */
  addresses: readonly string[] | undefined;
  expiresAtMs: number;
  refreshing: boolean;
}

/** Resolved names with a TTL, filled off the render path. */
export class HostCache {
  private readonly hosts = new Map<string, CachedHost>();
  private readonly lookups = new Set<Promise<void>>();
  private readonly resolve: HostResolver;
  private readonly now: () => number;
  private readonly positiveTtlMs: number;
  private readonly negativeTtlMs: number;
  private readonly maxNames: number;
  private readonly maxLookups: number;

  constructor(options: HostCacheOptions) {
    this.resolve = options.resolve;
    this.now = options.now ?? Date.now;
    this.positiveTtlMs = options.positiveTtlMs ?? 60_000;
    this.negativeTtlMs = options.negativeTtlMs ?? 5_000;
    this.maxNames = options.maxNames ?? 1_000;
    this.maxLookups = options.maxLookups ?? 4;
  }

  /**
   * What is known of `name` now: its addresses, an empty list when it did not resolve, or
   * `undefined` when no answer has come yet. An expired answer is still returned while a fresh
   * lookup runs; a missing or expired one starts that lookup (unless too many are in flight).
   */
  addresses(name: string): readonly string[] | undefined {
    let host = this.hosts.get(name);
    if (host !== undefined) {
      // Re-inserting keeps the map in least-recently-used order.
      this.hosts.delete(name);
      this.hosts.set(name, host);
    }
    if (host !== undefined && (host.refreshing || this.now() < host.expiresAtMs)) return host.addresses;
    if (this.lookups.size >= this.maxLookups) return host?.addresses;
    if (host === undefined) {
      host = { addresses: undefined, expiresAtMs: 0, refreshing: false };
      this.hosts.set(name, host);
      if (this.hosts.size > this.maxNames) this.hosts.delete(this.hosts.keys().next().value!);
    }
    this.startLookup(name, host);
    return host.addresses;
  }

  /** Settles once no lookup is in flight (tests wait on it instead of on time). */
  async settled(): Promise<void> {
    while (this.lookups.size > 0) await Promise.all(this.lookups);
  }

  private startLookup(name: string, host: CachedHost): void {
    host.refreshing = true;
    const lookup = new Promise<readonly string[]>((resolve) => resolve(this.resolve(name)))
      .catch((): readonly string[] => [])
      .then((addresses) => {
        host.addresses = addresses;
        host.expiresAtMs = this.now() + (addresses.length > 0 ? this.positiveTtlMs : this.negativeTtlMs);
        host.refreshing = false;
        this.lookups.delete(lookup);
      });
    this.lookups.add(lookup);
  }
}
