/**
 * The tailing loop of logs.source.file (see that module for the behaviour): expands the globs
 * every sync period (or when a watched directory changes), polls one FileTailer per matched file,
 * backs the poll interval off while nothing changes, and writes the positions on a timer of its
 * own. Every batch a tailer reads goes through `send`; the tailer moves its position past the batch
 * only once that promise resolves.
 */
import { watch, type FSWatcher } from 'node:fs';
import { access } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Subscription } from 'rxjs';
import type { Entry, Labels } from '../../core/entry.js';
import { InputBacklog } from '../../core/input-time.js';
import type { SendOptions } from '../../core/receiver.js';
import { healthy, unhealthy, type ComponentContext, type Health } from '../../core/runtime/component.js';
import { expandBraces, globFiles, hasGlobSyntax, matchPath } from './glob.js';
import { sourceFileMetrics, type SourceFileMetrics } from './metrics.js';
import { Positions } from './positions.js';
import { ownsFile, type PositionsShard } from './positions-files.js';
import { FileIdentities, FileTailer } from './tailer.js';

/** A glob of files to tail, a glob of paths among them to skip, and labels for their entries. */
export interface FileTarget {
  readonly include: string;
  readonly exclude: string;
  readonly labels: Labels;
}

/** The decoded, validated settings of logs.source.file (everything but `forward_to`). */
export interface FileSourceSettings {
  readonly targets: readonly FileTarget[];
  readonly labels: Labels;
  readonly positionsFile: string;
  readonly positionsSyncMs: number;
  readonly tailFromEnd: boolean;
  readonly maxLineSize: number;
  readonly maxLineSizeTruncate: boolean;
  readonly minPollMs: number;
  readonly maxPollMs: number;
  readonly syncMs: number;
}

export class TailedFiles {
  private settings: FileSourceSettings;
  private state: Health = healthy();
  private readonly tailers = new Map<string, FileTailer>();
  private readonly identities = new FileIdentities();
  private readonly positions: Positions;
  /** On a shard of a run with several: this shard, which tails only the files whose path it owns. */
  private readonly shard: PositionsShard | undefined;
  private readonly abort = new AbortController();
  private readonly watchers = new Map<string, FSWatcher>();
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> = Promise.resolve();
  private needsSync = true;
  private firstSync = true;
  private positionsTimer: Subscription | undefined;
  private readonly metrics: SourceFileMetrics;
  /** Lines of files being read and not sent yet (see FileTailer's `backlog`). */
  private readonly backlog = new InputBacklog();

  constructor(
    settings: FileSourceSettings,
    private readonly ctx: ComponentContext,
    /** Takes a batch over; resolves once it is taken over (acknowledged), rejects when refused. */
    private readonly send: (entries: Entry[], options?: SendOptions) => Promise<void>,
  ) {
    this.settings = settings;
    this.shard = ctx.shard && ctx.shard.count > 1 ? { index: ctx.shard.index, count: ctx.shard.count } : undefined;
    this.positions = new Positions(settings.positionsFile, ctx.log, this.shard);
    this.metrics = sourceFileMetrics(ctx.registry);
  }

  health(): Health {
    return this.state;
  }

  /** New settings apply from the next glob expansion; `positionsFile` must not change. */
  reconfigure(settings: FileSourceSettings): void {
    this.settings = settings;
    this.needsSync = true;
    this.wake();
  }

  /**
   * Loads the positions, then starts the loop; resolves once the positions are loaded (a positions
   * file that cannot be read leaves it unhealthy, tailing nothing).
   */
  async start(): Promise<void> {
    try {
      await this.positions.load();
    } catch (err) {
      this.state = unhealthy((err as Error).message);
      this.ctx.log('error', 'reading positions failed', { error: (err as Error).message });
      return;
    }
    if (this.abort.signal.aborted) return;
    this.schedulePositionsSync();
    this.loop = this.run().catch((err: Error) => {
      this.state = unhealthy(`tailing failed: ${err.message}`);
      this.ctx.log('error', 'tailing failed', { error: err.message });
    });
  }

  /** Stops after the batch in flight is answered, then saves the positions. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.positionsTimer?.unsubscribe();
    this.wake();
    await this.loop;
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
    for (const tailer of this.tailers.values()) await tailer.close();
    this.metrics.filesActive.set({ component_id: this.ctx.id }, 0);
    this.backlog.close();
    try {
      await this.positions.save();
    } catch (err) {
      this.ctx.log('error', 'saving positions failed', { error: (err as Error).message });
    }
  }

  private async run(): Promise<void> {
    const scheduler = this.ctx.clock.scheduler;
    let lastSync = -Infinity;
    let interval = this.settings.minPollMs;
    while (!this.abort.signal.aborted) {
      if (this.needsSync || scheduler.now() - lastSync >= this.settings.syncMs) {
        this.needsSync = false;
        lastSync = scheduler.now();
        await this.sync();
      }
      let changed = false;
      let failure: string | undefined;
      for (const tailer of [...this.tailers.values()]) {
        if (this.abort.signal.aborted) break;
        try {
          if (await tailer.poll()) changed = true;
        } catch (err) {
          failure = `reading ${tailer.path}: ${(err as Error).message}`;
          this.ctx.log('error', 'reading file failed', { path: tailer.path, error: (err as Error).message });
        }
      }
      this.state = failure ? unhealthy(failure) : healthy();
      interval = changed ? this.settings.minPollMs : Math.min(this.settings.maxPollMs, interval * 2);
      if (!this.abort.signal.aborted) await this.sleep(interval);
    }
  }

  /**
   * Writes the positions every positions_sync_period, on a timer of its own: a poll can take long
   * (a large file read against a slow downstream) and the positions reached meanwhile must still
   * be written.
   */
  private schedulePositionsSync(): void {
    this.positionsTimer = this.ctx.clock.scheduler.schedule(() => {
      if (this.abort.signal.aborted) return;
      void this.positions.save().catch((err: Error) => this.ctx.log('error', 'saving positions failed', { error: err.message }));
      this.schedulePositionsSync();
    }, this.settings.positionsSyncMs);
  }

  /**
   * Expands the globs: new files get a tailer; files that vanished from the match are let go. On a
   * shard, every shard expands the same globs and keeps the files whose path it owns.
   */
  private async sync(): Promise<void> {
    const wanted = new Map<string, Labels>();
    const want = (path: string, target: FileTarget) => {
      if (!wanted.has(path) && ownsFile(path, this.shard)) wanted.set(path, { ...this.settings.labels, ...target.labels, filename: path });
    };
    for (const target of this.settings.targets) {
      for (const path of await globFiles(target.include)) {
        if (target.exclude === '' || !matchPath(target.exclude, path)) want(path, target);
      }
      // A literal path that does not exist yet is followed anyway, so it is read once created.
      if (!hasGlobSyntax(target.include)) want(target.include, target);
    }
    // Forget positions of files that are gone and no longer matched, so the file stays small.
    for (const path of this.positions.paths()) {
      if (!wanted.has(path) && !this.tailers.has(path) && !(await exists(path))) this.positions.delete(path);
    }
    for (const [path, tailer] of this.tailers) {
      if (wanted.has(path)) continue;
      // Read what is left of a file that was rotated away or deleted before letting it go.
      try {
        await tailer.poll();
      } catch {
        // It is gone; nothing more can be read.
      }
      await tailer.close();
      this.tailers.delete(path);
      this.metrics.readBytes.remove({ component_id: this.ctx.id, path });
      this.metrics.fileBytes.remove({ component_id: this.ctx.id, path });
    }
    for (const [path, labels] of wanted) {
      if (this.tailers.has(path)) continue;
      const series = { component_id: this.ctx.id, path };
      this.tailers.set(
        path,
        new FileTailer({
          path,
          labels,
          positions: this.positions,
          identities: this.identities,
          clock: this.ctx.clock,
          send: this.send,
          backlog: this.backlog,
          tailFromEnd: this.settings.tailFromEnd && this.firstSync,
          log: this.ctx.log,
          signal: this.abort.signal,
          maxLineSize: this.settings.maxLineSize,
          maxLineSizeTruncate: this.settings.maxLineSizeTruncate,
          batchAckMs: this.settings.positionsSyncMs / 16,
          stats: {
            sent: (lines, _bytes, offset) => {
              this.metrics.readLines.inc(series, lines);
              this.metrics.readBytes.set(series, offset);
            },
            size: (bytes) => this.metrics.fileBytes.set(series, bytes),
            overLong: (lines, bytes, truncated) => {
              const tooLong = { ...series, reason: 'line_too_long' };
              (truncated ? this.metrics.mutatedEntries : this.metrics.droppedEntries).inc(tooLong, lines);
              (truncated ? this.metrics.mutatedBytes : this.metrics.droppedBytes).inc(tooLong, bytes);
            },
          },
        }),
      );
    }
    this.metrics.filesActive.set({ component_id: this.ctx.id }, this.tailers.size);
    this.firstSync = false;
    this.watchDirectories();
  }

  /** Watches the directories of the tailed files and of the globs' fixed prefixes. */
  private watchDirectories(): void {
    const dirs = new Set<string>();
    for (const path of this.tailers.keys()) dirs.add(dirname(path));
    for (const target of this.settings.targets) {
      for (const pattern of expandBraces(target.include)) {
        const fixed = pattern.split('/').findIndex((segment) => hasGlobSyntax(segment));
        if (fixed < 0) dirs.add(dirname(pattern));
        else dirs.add(fixed === 0 ? '.' : pattern.split('/').slice(0, fixed).join('/') || '/');
      }
    }
    for (const [dir, watcher] of this.watchers) {
      if (dirs.has(dir)) continue;
      watcher.close();
      this.watchers.delete(dir);
    }
    for (const dir of dirs) {
      if (this.watchers.has(dir)) continue;
      try {
        const watcher = watch(dir, { persistent: false }, (event) => {
          // A created, removed or renamed entry may be a file the globs now match.
          if (event === 'rename') this.needsSync = true;
          this.wake();
        });
        watcher.on('error', () => {
          watcher.close();
          this.watchers.delete(dir);
        });
        this.watchers.set(dir, watcher);
      } catch {
        // Polling alone still finds every change.
      }
    }
  }

  private wake(): void {
    const wakeUp = this.wakeUp;
    this.wakeUp = undefined;
    wakeUp?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = this.ctx.clock.scheduler.schedule(() => this.wake(), ms);
      this.wakeUp = () => {
        timer.unsubscribe();
        resolve();
      };
    });
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
