/**
 * logs.source.file — tails the files matching glob patterns and forwards each new line as a log
 * entry labelled `filename` (the file's path) plus its target's labels and `labels`. Exports
 * nothing.
 *
 * Files are named by `path` (one glob) and/or `targets` (a list of label maps, as the reference's
 * file source takes them from its discovery component: `__path__` is the glob, the optional
 * `__path_exclude__` a glob of paths to skip, other labels not starting with `__` go on every
 * entry). Globs use doublestar syntax and are expanded again every `file_match.sync_period`.
 *
 * Each file is followed across rename and copytruncate rotation and truncation, and is polled
 * every `file_watch.min_poll_frequency`, backing off to `max_poll_frequency` while nothing
 * changes; file system events wake the poller early. A line is sent once its newline has arrived,
 * and the next lines are read only after the receivers took the previous batch over.
 *
 * Positions: the offset reached in each file advances only once the receivers took a batch over,
 * and is written to `positions_file` (and flushed to the device) every `positions_sync_period`,
 * as the reference's positions sync period, and when the component stops. So a stop and restart
 * neither skips nor repeats lines, and after a crash (SIGKILL) the lines read again are those
 * written out downstream since the last positions write, about one `positions_sync_period` of
 * lines, plus those of the batch that was in flight at that write. That batch is kept short in
 * time: a file's batches start at 64 lines and double up to 1000 (or 1 MiB) while the receivers
 * take them over within a sixteenth of the sync period; when they are slower per line (a rate
 * limit, a slow sink), a batch holds only what they take over in that time. (Receivers slow per
 * batch, not per line, keep large batches: smaller ones would only cut throughput.) Without
 * `positions_file`, positions live in memory only. `tail_from_end` starts files found at startup
 * without a saved position at their end. An empty positions file is a clean start (logged); one
 * that is not the format makes the component unhealthy, tailing nothing.
 *
 * `max_line_size` (bytes, such as "256KiB"; 0 for no limit), as the reference's limit of that name:
 * a longer line is dropped, or with `max_line_size_truncate` cut to its first `max_line_size` bytes
 * (back to a character boundary). Such a line is never held whole: memory stays bounded by the
 * limit however long the line. Counted in `logs_source_file_dropped_entries_total` and
 * `_dropped_bytes_total` (its bytes), or `logs_source_file_mutated_entries_total` and
 * `_mutated_bytes_total` (the bytes cut off), with `path` and `reason="line_too_long"`, as the
 * reference's client counts them.
 *
 * Metrics, by `component_id`: `logs_source_file_read_lines_total{path}` (lines taken over),
 * `logs_source_file_read_bytes_total{path}` (the offset taken over), `logs_source_file_file_bytes_total{path}`
 * (the file's size) and `logs_source_file_files_active_total`, as the reference's file source.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { Subscription } from 'rxjs';
import { access } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Block } from '../lib/config/ast.js';
import { ConfigError, ConfigErrors } from '../lib/config/errors.js';
import type { Labels } from '../core/entry.js';
import { fanOut, LOGS_RECEIVER, type LogsReceiver } from '../core/receiver.js';
import { defineComponent, healthy, unhealthy, type ComponentArgs, type ComponentContext, type Health } from '../core/runtime/component.js';
import { t, type NestedBlockSpec } from '../core/schema.js';
import { expandBraces, globFiles, hasGlobSyntax, matchPath } from './file/glob.js';
import { sourceFileMetrics, type SourceFileMetrics } from './file/metrics.js';
import { Positions } from './file/positions.js';
import { FileIdentities, FileTailer } from './file/tailer.js';
import { attributePos, byteSize, durationMs, nestedBlocks } from '../lib/loki/config.js';

const PATH_LABEL = '__path__';
const PATH_EXCLUDE_LABEL = '__path_exclude__';

const fileWatchSpec: NestedBlockSpec = {
  doc: 'How often files are checked for new lines.',
  fields: {
    min_poll_frequency: { kind: t.duration, default: 250_000_000n, doc: 'Poll interval while files change.' },
    max_poll_frequency: { kind: t.duration, default: 250_000_000n, doc: 'Longest poll interval while nothing changes.' },
  },
};

const fileMatchSpec: NestedBlockSpec = {
  doc: 'How globs are expanded.',
  fields: {
    enabled: { kind: t.bool, default: false, doc: 'Accepted for compatibility; globs are always expanded.' },
    sync_period: { kind: t.duration, default: 10_000_000_000n, doc: 'How often globs are expanded again to find new files.' },
  },
};

export const logsSourceFileComponent = defineComponent({
  name: 'logs.source.file',
  doc: 'Tails files matching glob patterns, across rotation, and forwards their lines as log entries.',
  example: `logs.source.file "app" {
  path       = "/var/log/app/*.log"
  labels     = { job = "app" }
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" { }`,
  exportNames: [],
  fields: {
    path: { kind: t.string, default: '', doc: 'A glob of files to tail (shorthand for one target).' },
    targets: {
      kind: t.list(t.map(t.string)),
      default: [],
      doc: 'Targets to tail: `__path__` is a glob, `__path_exclude__` a glob to skip, other labels are added.',
    },
    labels: { kind: t.map(t.string), default: {}, doc: 'Labels added to every entry.' },
    positions_file: {
      kind: t.string,
      default: '',
      doc: 'File that keeps how far each file was read; empty keeps positions in memory only.',
    },
    positions_sync_period: {
      kind: t.duration,
      default: 10_000_000_000n,
      doc: 'How often positions are written to positions_file; after a crash, about one period of lines (those written out since the last write) is read again.',
    },
    tail_from_end: { kind: t.bool, default: false, doc: 'Start files found at startup without a saved position at their end.' },
    max_line_size: {
      kind: t.string,
      default: '0',
      doc: 'Longest line, such as "256KiB"; a longer one is dropped (or truncated); 0 turns the limit off.',
    },
    max_line_size_truncate: {
      kind: t.bool,
      default: false,
      doc: 'Truncate lines longer than max_line_size to that size instead of dropping them.',
    },
    forward_to: { kind: t.list(t.capsule(LOGS_RECEIVER)), required: true, doc: 'Receivers the entries go to.' },
  },
  blocks: { file_watch: fileWatchSpec, file_match: fileMatchSpec },
  build(args, ctx) {
    return new LogsSourceFile(args, ctx);
  },
});

interface Target {
  readonly include: string;
  readonly exclude: string;
  readonly labels: Labels;
}

interface Settings {
  readonly forwardTo: readonly LogsReceiver[];
  readonly targets: readonly Target[];
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

function settingsOf(args: ComponentArgs): Settings {
  const v = args.values;
  const block = args.block as Block;
  const errors: ConfigError[] = [];
  const targets: Target[] = [];
  const path = v.path as string;
  if (path !== '') targets.push({ include: path, exclude: '', labels: {} });
  (v.targets as Array<Record<string, string>>).forEach((target, i) => {
    const include = target[PATH_LABEL] ?? '';
    if (include === '') errors.push(new ConfigError(`targets[${i}] has no ${PATH_LABEL} label`, attributePos(block, 'targets'), args.path));
    const labels: Labels = {};
    for (const [name, value] of Object.entries(target)) if (!name.startsWith('__')) labels[name] = value;
    targets.push({ include, exclude: target[PATH_EXCLUDE_LABEL] ?? '', labels });
  });
  if (path === '' && (v.targets as unknown[]).length === 0)
    errors.push(new ConfigError('one of path and targets must be set', block.pos, args.path));
  const watchValues = (v.file_watch as Record<string, unknown> | undefined) ?? {};
  const minPollMs = watchValues.min_poll_frequency === undefined ? 250 : durationMs(watchValues.min_poll_frequency);
  const maxPollMs = watchValues.max_poll_frequency === undefined ? 250 : durationMs(watchValues.max_poll_frequency);
  const watchBlock = nestedBlocks(block, 'file_watch')[0];
  const watchPath = [...args.path, 'file_watch'];
  if (minPollMs <= 0)
    errors.push(new ConfigError('min_poll_frequency must be greater than 0', attributePos(watchBlock, 'min_poll_frequency'), watchPath));
  if (maxPollMs < minPollMs)
    errors.push(
      new ConfigError(
        'max_poll_frequency must not be less than min_poll_frequency',
        attributePos(watchBlock, 'max_poll_frequency'),
        watchPath,
      ),
    );
  const matchValues = (v.file_match as Record<string, unknown> | undefined) ?? {};
  const syncMs = matchValues.sync_period === undefined ? 10_000 : durationMs(matchValues.sync_period);
  if (syncMs <= 0)
    errors.push(
      new ConfigError('sync_period must be greater than 0', attributePos(nestedBlocks(block, 'file_match')[0], 'sync_period'), [
        ...args.path,
        'file_match',
      ]),
    );
  const positionsSyncMs = durationMs(v.positions_sync_period);
  if (positionsSyncMs <= 0)
    errors.push(new ConfigError('positions_sync_period must be greater than 0', attributePos(block, 'positions_sync_period'), args.path));
  let maxLineSize = 0;
  try {
    maxLineSize = byteSize(v.max_line_size as string, 'max_line_size', block, args.path);
  } catch (err) {
    errors.push(err as ConfigError);
  }
  if (errors.length > 0) throw new ConfigErrors(errors);
  return {
    forwardTo: v.forward_to as LogsReceiver[],
    targets,
    labels: v.labels as Labels,
    positionsFile: v.positions_file as string,
    positionsSyncMs,
    tailFromEnd: v.tail_from_end as boolean,
    maxLineSize,
    maxLineSizeTruncate: v.max_line_size_truncate as boolean,
    minPollMs,
    maxPollMs,
    syncMs,
  };
}

export class LogsSourceFile {
  readonly exports = {};
  private settings: Settings;
  private state: Health = healthy();
  private readonly tailers = new Map<string, FileTailer>();
  private readonly identities = new FileIdentities();
  private positions: Positions;
  private readonly abort = new AbortController();
  private readonly watchers = new Map<string, FSWatcher>();
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> = Promise.resolve();
  private needsSync = true;
  private firstSync = true;
  private positionsTimer: Subscription | undefined;
  private readonly metrics: SourceFileMetrics;

  constructor(
    args: ComponentArgs,
    private readonly ctx: ComponentContext,
  ) {
    this.settings = settingsOf(args);
    this.positions = new Positions(this.settings.positionsFile, ctx.log);
    this.metrics = sourceFileMetrics(ctx.registry);
  }

  health(): Health {
    return this.state;
  }

  update(args: ComponentArgs): void {
    const next = settingsOf(args);
    if (next.positionsFile !== this.settings.positionsFile) {
      throw new ConfigError(
        'positions_file cannot change while the component runs',
        attributePos(args.block as Block, 'positions_file'),
        args.path,
      );
    }
    this.settings = next;
    this.needsSync = true;
    this.wake();
  }

  async start(): Promise<void> {
    try {
      await this.positions.load();
    } catch (err) {
      this.state = unhealthy((err as Error).message);
      this.ctx.log('error', 'reading positions failed', { error: (err as Error).message });
      return;
    }
    this.schedulePositionsSync();
    this.loop = this.run().catch((err: Error) => {
      this.state = unhealthy(`tailing failed: ${err.message}`);
      this.ctx.log('error', 'tailing failed', { error: err.message });
    });
  }

  /** Stops after the batch in flight is taken over, then saves the positions. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.positionsTimer?.unsubscribe();
    this.wake();
    await this.loop;
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
    for (const tailer of this.tailers.values()) await tailer.close();
    this.metrics.filesActive.set({ component_id: this.ctx.id }, 0);
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

  /** Expands the globs: new files get a tailer; files that vanished from the match are let go. */
  private async sync(): Promise<void> {
    const wanted = new Map<string, Labels>();
    for (const target of this.settings.targets) {
      for (const path of await globFiles(target.include)) {
        if (target.exclude !== '' && matchPath(target.exclude, path)) continue;
        if (!wanted.has(path)) wanted.set(path, { ...this.settings.labels, ...target.labels, filename: path });
      }
      // A literal path that does not exist yet is followed anyway, so it is read once created.
      if (!hasGlobSyntax(target.include) && !wanted.has(target.include))
        wanted.set(target.include, { ...this.settings.labels, ...target.labels, filename: target.include });
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
          send: (entries) => fanOut(this.settings.forwardTo, entries),
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
