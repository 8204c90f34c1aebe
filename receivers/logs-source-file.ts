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
  defineComponent,
  healthy,
  type Component,
  type ComponentArgs,
  type ComponentContext,
  type Health,
} from '../core/runtime/component.js';
import { standaloneContext, type RunOptions } from '../core/runtime/standalone.js';
import {
  applyDefaults,
  t,
  type BlockSpec,
  type FieldSpec,
  type NestedBlockSpec,
  attributePos,
  byteSize,
  durationMs,
  nestedBlocks,
  runChecks,
} from '../lib/config/schema.js';
import { TailedFiles, type FileSourceSettings, type FileTarget } from './file/tailed-files.js';

const NAME = 'logs.source.file';
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

/** The component's attributes but `forward_to`: the options of `tailFiles` too. */
const fileSourceFields: Readonly<Record<string, FieldSpec>> = {
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
};

const fileSourceBlocks = { file_watch: fileWatchSpec, file_match: fileMatchSpec };

/** What `tailFiles` takes: the component's block without `forward_to`. */
const tailFilesSpec: BlockSpec = { fields: fileSourceFields, blocks: fileSourceBlocks };

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
    forward_to: { kind: t.list(t.capsule(LOGS_RECEIVER)), required: true, doc: 'Receivers the entries go to.' },
  },
  blocks: fileSourceBlocks,
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
  const decode = (given: TailFilesOptions): FileSourceSettings =>
    settingsOf(applyDefaults(tailFilesSpec, given as Record<string, unknown>, [NAME]), undefined, [NAME]);
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

/** The component: the decoded arguments run through `fileSource`, its batches forwarded to `forward_to`. */
export class LogsSourceFile implements Component {
  readonly exports = {};
  private forwardTo: readonly LogsReceiver[];
  private readonly positionsFile: string;
  private readonly source: FileSource;
  private unforward: (() => void) | undefined;

  constructor(args: ComponentArgs, ctx: ComponentContext) {
    const settings = settingsOf(args.values, args.block, args.path);
    this.forwardTo = args.values.forward_to as LogsReceiver[];
    this.positionsFile = settings.positionsFile;
    this.source = fileSource(settings, ctx);
  }

  health(): Health {
    return this.source.health();
  }

  update(args: ComponentArgs): void {
    const next = keepPositionsFile(this.positionsFile, settingsOf(args.values, args.block, args.path), args.block, args.path);
    this.forwardTo = args.values.forward_to as LogsReceiver[];
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
 * Decodes and validates the attribute values (defaults applied) into settings; `block` places the
 * errors in a config, and is undefined for programmatic options (errors then carry no position).
 */
function settingsOf(v: Record<string, unknown>, block: Block | undefined, path: readonly string[]): FileSourceSettings {
  return runChecks(block, path, ({ attempt, fail, report }) => {
    const targets: FileTarget[] = [];
    const single = v.path as string;
    if (single !== '') targets.push({ include: single, exclude: '', labels: {} });
    (v.targets as Array<Record<string, string>>).forEach((target, i) => {
      const include = target[PATH_LABEL] ?? '';
      if (include === '') fail(`targets[${i}] has no ${PATH_LABEL} label`, 'targets');
      const labels: Labels = {};
      for (const [name, value] of Object.entries(target)) if (!name.startsWith('__')) labels[name] = value;
      targets.push({ include, exclude: target[PATH_EXCLUDE_LABEL] ?? '', labels });
    });
    if (single === '' && (v.targets as unknown[]).length === 0)
      report(new ConfigError('one of path and targets must be set', block?.pos, path));
    const watchValues = (v.file_watch as Record<string, unknown> | undefined) ?? {};
    const minPollMs = watchValues.min_poll_frequency === undefined ? 250 : durationMs(watchValues.min_poll_frequency);
    const maxPollMs = watchValues.max_poll_frequency === undefined ? 250 : durationMs(watchValues.max_poll_frequency);
    // A nested block's problem names the block, also for options given in code (no block written).
    const failIn = (inner: string, reason: string, attribute: string) =>
      report(new ConfigError(reason, attributePos(nestedBlocks(block, inner)[0], attribute), [...path, inner]));
    if (minPollMs <= 0) failIn('file_watch', 'min_poll_frequency must be greater than 0', 'min_poll_frequency');
    if (maxPollMs < minPollMs) failIn('file_watch', 'max_poll_frequency must not be less than min_poll_frequency', 'max_poll_frequency');
    const matchValues = (v.file_match as Record<string, unknown> | undefined) ?? {};
    const syncMs = matchValues.sync_period === undefined ? 10_000 : durationMs(matchValues.sync_period);
    if (syncMs <= 0) failIn('file_match', 'sync_period must be greater than 0', 'sync_period');
    const positionsSyncMs = durationMs(v.positions_sync_period);
    if (positionsSyncMs <= 0) fail('positions_sync_period must be greater than 0', 'positions_sync_period');
    const maxLineSize = attempt(() => byteSize(v.max_line_size as string, 'max_line_size', block, path), 0);
    return {
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
  });
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
