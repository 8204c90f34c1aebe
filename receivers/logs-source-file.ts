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
 * On a shard of a sharded run (`rivulet run --shards N`), each shard's instance expands the same
 * globs and tails only the files whose path it owns (FNV-1a of the path, modulo N), so a file's
 * lines stay on one shard and in order. It keeps their positions in `<positions_file>.shard-<i>`;
 * loading, sharded or in place, merges `positions_file` and every shard file beside it, each
 * file's position from the newest (receivers/file/positions-files.ts).
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
 *
 * From code, `tailFiles(options)` is the same source as a `LogSource`: the component is that
 * source with its batches forwarded to `forward_to`, a batch acknowledged once every receiver took
 * it over.
 */
import type { Block } from '../lib/config/ast.js';
import { ConfigError } from '../lib/config/errors.js';
import { forwardBatches, logSource, type LogSource } from '../core/delivery.js';
import type { Labels } from '../core/entry.js';
import { LOGS_RECEIVER, type LogsReceiver } from '../core/receiver.js';
import {
  componentOptions,
  defineComponent,
  healthy,
  type Component,
  type ComponentArgs,
  type ComponentContext,
  type Health,
} from '../core/runtime/component.js';
import { standaloneContext, type RunOptions } from '../core/runtime/standalone.js';
import {
  attributePos,
  durationMs,
  nestedBlocks,
  t,
  type BlockValues,
  type Checks,
  type FieldSpec,
  type NestedBlockSpec,
} from '../lib/config/schema.js';
import { TailedFiles, type FileSourceSettings, type FileTarget } from './file/tailed-files.js';

const NAME = 'logs.source.file';
const PATH_LABEL = '__path__';
const PATH_EXCLUDE_LABEL = '__path_exclude__';
/** The poll interval and glob sync period when their block is not written, as their fields' defaults. */
const POLL_NS = 250_000_000n;
const SYNC_NS = 10_000_000_000n;

const fileWatchSpec = {
  doc: 'How often files are checked for new lines.',
  fields: {
    min_poll_frequency: {
      kind: t.durationMs,
      default: POLL_NS,
      min: 1,
      belowMin: 'min_poll_frequency must be greater than 0',
      doc: 'Poll interval while files change.',
    },
    max_poll_frequency: { kind: t.durationMs, default: POLL_NS, doc: 'Longest poll interval while nothing changes.' },
  },
} satisfies NestedBlockSpec;

const fileMatchSpec = {
  doc: 'How globs are expanded.',
  fields: {
    enabled: { kind: t.bool, default: false, doc: 'Accepted for compatibility; globs are always expanded.' },
    sync_period: {
      kind: t.durationMs,
      default: SYNC_NS,
      min: 1,
      belowMin: 'sync_period must be greater than 0',
      doc: 'How often globs are expanded again to find new files.',
    },
  },
} satisfies NestedBlockSpec;

/** The component's attributes but `forward_to`: the options of `tailFiles` too. */
const fileSourceFields = {
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
    kind: t.durationMs,
    default: SYNC_NS,
    min: 1,
    belowMin: 'positions_sync_period must be greater than 0',
    doc: 'How often positions are written to positions_file; after a crash, about one period of lines (those written out since the last write) is read again.',
  },
  tail_from_end: { kind: t.bool, default: false, doc: 'Start files found at startup without a saved position at their end.' },
  max_line_size: {
    kind: t.bytes,
    default: '0',
    doc: 'Longest line, such as "256KiB"; a longer one is dropped (or truncated); 0 turns the limit off.',
  },
  max_line_size_truncate: {
    kind: t.bool,
    default: false,
    doc: 'Truncate lines longer than max_line_size to that size instead of dropping them.',
  },
} satisfies Record<string, FieldSpec>;

/** What `tailFiles` takes: the component's block without `forward_to`. */
const tailFilesSpec = { fields: fileSourceFields, blocks: { file_watch: fileWatchSpec, file_match: fileMatchSpec } };

/** What the component runs on: the receivers and the settings of the tailing. */
interface FileSourceArgs {
  readonly forwardTo: readonly LogsReceiver[];
  readonly files: FileSourceSettings;
}

export const logsSourceFileComponent = defineComponent({
  name: NAME,
  doc: 'Tails files matching glob patterns, across rotation, and forwards their lines as log entries.',
  example: `logs.source.file "app" {
  path       = "/var/log/app/*.log"
  labels     = { job = "app" }
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" { }`,
  exportNames: [],
  fields: {
    ...fileSourceFields,
    forward_to: { kind: t.list(t.capsule<LogsReceiver>(LOGS_RECEIVER)), required: true, doc: 'Receivers the entries go to.' },
  },
  blocks: tailFilesSpec.blocks,
  validate: (values, checks): FileSourceArgs => ({ forwardTo: values.forward_to, files: fileSettings(values, checks) }),
  build(args, ctx) {
    return new LogsSourceFile(args, ctx);
  },
});

/**
 * The options of `tailFiles`: logs.source.file's attributes and blocks, by the same names and
 * with the same defaults (durations as Go duration strings such as "250ms", sizes as strings such
 * as "256KiB"), without `forward_to`.
 */
export interface TailFilesOptions {
  /** A glob of files to tail (shorthand for one target). One of `path` and `targets` is needed. */
  readonly path?: string;
  /** Label maps: `__path__` is a glob, `__path_exclude__` a glob to skip, other labels go on every entry. */
  readonly targets?: ReadonlyArray<Readonly<Record<string, string>>>;
  /** Labels added to every entry. */
  readonly labels?: Readonly<Record<string, string>>;
  /** File that keeps how far each file was read; empty (the default) keeps positions in memory only. */
  readonly positions_file?: string;
  /** How often positions are written to `positions_file` (default "10s"). */
  readonly positions_sync_period?: string;
  /** Start files found at startup without a saved position at their end. */
  readonly tail_from_end?: boolean;
  /** Longest line, such as "256KiB"; "0" (the default) turns the limit off. */
  readonly max_line_size?: string;
  /** Truncate longer lines to `max_line_size` instead of dropping them. */
  readonly max_line_size_truncate?: boolean;
  /** Poll interval while files change, and the longest one while nothing changes (both "250ms"). */
  readonly file_watch?: { readonly min_poll_frequency?: string; readonly max_poll_frequency?: string };
  /** How often globs are expanded again to find new files (default "10s"). */
  readonly file_match?: { readonly enabled?: boolean; readonly sync_period?: string };
}

/**
 * Tailed files as a `LogSource`: what `tailFiles` returns. Each batch a file's tailer reads is one
 * emitted `LogBatch`, and the file's next batch is read only once that one is answered.
 */
export interface FileTail extends LogSource {
  /** Healthy, or why not: a positions file that cannot be read (nothing is tailed), a file failing to read. */
  health(): Health;
  /**
   * Applies new options while it runs, as a config reload does: new globs and labels apply from
   * the next glob expansion (at once). `positions_file` cannot change; invalid options throw the
   * same ConfigError(s) as `tailFiles`, and the running settings stay.
   */
  update(options: TailFilesOptions): void;
}

/**
 * Tails the files matching globs, as logs.source.file does, as a `LogSource` of batches. The
 * position reached in a file advances only when its batch is acknowledged (and is written to
 * `positions_file` every `positions_sync_period` and on `stop()`); a refused batch (`nack`) is
 * read again on the next poll. `stop()` stops reading after the batches in flight are answered,
 * writes the positions and completes; unsubscribing stops it the same way without waiting (the
 * positions are written once a batch still held is answered). Polls, glob expansions and
 * positions writes run on `run.clock`'s scheduler. Metrics go to `run.registry`
 * (`logs_source_file_*`, `component_id` `run.id`, by default "logs.source.file"). Invalid options
 * throw the component's ConfigErrors.
 *
 * ```ts
 * const files = tailFiles({ path: '/var/log/app/*.log', positions_file: '/var/lib/app/positions.json' });
 * files.pipe(sendTo(pipeline)).subscribe();
 * process.on('SIGTERM', () => void files.stop());
 * ```
 */
export function tailFiles(options: TailFilesOptions, run: RunOptions = {}): FileTail {
  const decode = (given: TailFilesOptions) => componentOptions({ ...tailFilesSpec, validate: fileSettings }, given, [NAME]);
  const initial = decode(options);
  const source = fileSource(initial, standaloneContext(NAME, run));
  return Object.assign(source, {
    update: (next: TailFilesOptions) => source.reconfigure(keepPositionsFile(initial.positionsFile, decode(next), undefined, [NAME])),
  });
}

/** A `FileTail` as the component drives it: reconfigured with decoded settings. */
interface FileSource extends LogSource {
  health(): Health;
  reconfigure(settings: FileSourceSettings): void;
  /** Resolves once the positions of the current run are loaded. */
  started(): Promise<void>;
}

/**
 * The one source both `tailFiles` and the component run: each subscription tails with the settings
 * of that time, sending every batch it reads as one `LogBatch`.
 */
function fileSource(initial: FileSourceSettings, ctx: ComponentContext): FileSource {
  let settings = initial;
  let running: TailedFiles | undefined;
  let starting: Promise<void> = Promise.resolve();
  const source = logSource((receiver) => {
    const tailing = new TailedFiles(settings, ctx, (entries, options) => receiver.send(entries, options));
    const loaded = tailing.start();
    running = tailing;
    starting = loaded;
    return {
      stop: async () => {
        // Stopping while the positions load would let the loop start after the stop.
        await loaded;
        await tailing.stop();
        if (running === tailing) running = undefined;
      },
    };
  });
  return Object.assign(source, {
    health: () => running?.health() ?? healthy(),
    reconfigure: (next: FileSourceSettings) => {
      settings = next;
      running?.reconfigure(next);
    },
    started: () => starting,
  });
}

/** The component: its settings run through `fileSource`, its batches forwarded to `forward_to`. */
export class LogsSourceFile implements Component<FileSourceArgs> {
  readonly exports = {};
  private forwardTo: readonly LogsReceiver[];
  private readonly positionsFile: string;
  private readonly source: FileSource;
  private unforward: (() => void) | undefined;

  constructor(args: ComponentArgs<FileSourceArgs>, ctx: ComponentContext) {
    this.forwardTo = args.values.forwardTo;
    this.positionsFile = args.values.files.positionsFile;
    this.source = fileSource(args.values.files, ctx);
  }

  health(): Health {
    return this.source.health();
  }

  update(args: ComponentArgs<FileSourceArgs>): void {
    const next = keepPositionsFile(this.positionsFile, args.values.files, args.block, args.path);
    this.forwardTo = args.values.forwardTo;
    this.source.reconfigure(next);
  }

  async start(): Promise<void> {
    this.unforward = forwardBatches(this.source, () => this.forwardTo);
    await this.source.started();
  }

  /** Stops after the batch in flight is taken over, then saves the positions. */
  async stop(): Promise<void> {
    await this.source.stop();
    this.unforward?.();
    this.unforward = undefined;
  }
}

/**
 * The settings the decoded values (defaults applied) stand for: the targets from `path` and
 * `targets`, and the checks that span fields. `checks.block` places the errors in a config; for
 * options given in code there is none (errors then carry no position).
 */
function fileSettings(v: BlockValues<typeof tailFilesSpec>, { block, path, fail, report }: Checks): FileSourceSettings {
  const targets: FileTarget[] = [];
  if (v.path !== '') targets.push({ include: v.path, exclude: '', labels: {} });
  v.targets.forEach((target, i) => {
    const include = target[PATH_LABEL] ?? '';
    if (include === '') fail(`targets[${i}] has no ${PATH_LABEL} label`, 'targets');
    const labels: Labels = {};
    for (const [name, value] of Object.entries(target)) if (!name.startsWith('__')) labels[name] = value;
    targets.push({ include, exclude: target[PATH_EXCLUDE_LABEL] ?? '', labels });
  });
  if (v.path === '' && v.targets.length === 0) report(new ConfigError('one of path and targets must be set', block?.pos, path));
  const minPollMs = v.file_watch?.min_poll_frequency ?? durationMs(POLL_NS);
  const maxPollMs = v.file_watch?.max_poll_frequency ?? durationMs(POLL_NS);
  // A nested block's problem names the block, also for options given in code (no block written).
  if (maxPollMs < minPollMs)
    report(
      new ConfigError(
        'max_poll_frequency must not be less than min_poll_frequency',
        attributePos(nestedBlocks(block, 'file_watch')[0], 'max_poll_frequency'),
        [...path, 'file_watch'],
      ),
    );
  return {
    targets,
    labels: v.labels,
    positionsFile: v.positions_file,
    positionsSyncMs: v.positions_sync_period,
    tailFromEnd: v.tail_from_end,
    maxLineSize: v.max_line_size,
    maxLineSizeTruncate: v.max_line_size_truncate,
    minPollMs,
    maxPollMs,
    syncMs: v.file_match?.sync_period ?? durationMs(SYNC_NS),
  };
}

/** The new settings, unless they name another positions file: the loaded positions belong to the first. */
function keepPositionsFile(
  positionsFile: string,
  next: FileSourceSettings,
  block: Block | undefined,
  path: readonly string[],
): FileSourceSettings {
  if (next.positionsFile !== positionsFile)
    throw new ConfigError('positions_file cannot change while the component runs', attributePos(block, 'positions_file'), path);
  return next;
}
