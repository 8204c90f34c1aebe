/**
 * profiles.echo — a sink that records every profile it receives as one JSON line (labels, sizes,
 * a SHA-256 of the bytes, content types and query for ingest, the caller's deadline when it has
 * one) to stdout or to the file named by `path`, and optionally writes each raw body into
 * `raw_dir`. Exports `receiver`. Nothing is forwarded; it is the end of a profile pipeline.
 * Counts `profiles_echo_profiles_total{api}`, `profiles_echo_bytes_total` (profile bytes) and
 * `profiles_echo_write_errors_total` by `component_id`. The file and `raw_dir` are opened and
 * created when the component starts, never while a config is only built (`rivulet validate`).
 */
import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deadlineOf } from '../core/deadline.js';
import { labelsToObject } from '../lib/pyroscope/labels.js';
import { profilesReceiverCapsule, type IngestProfile, type ProfilesReceiver, type PushSeries } from '../core/profiles.js';
import { outputPath } from './output-path.js';
import { Counter } from 'prom-client';
import { perRegistry } from '../core/metrics.js';
import { componentOptions, defineComponent, healthy, type ComponentContext } from '../core/runtime/component.js';
import { profilesSink, type ProfilesSink } from '../core/profile-delivery.js';
import { standaloneContext, type RunOptions } from '../core/runtime/standalone.js';
import { t } from '../lib/config/schema.js';

interface EchoMetrics {
  readonly profiles: Counter<'component_id' | 'api'>;
  readonly bytes: Counter<'component_id'>;
  readonly errors: Counter<'component_id'>;
}

const echoMetrics = perRegistry(
  (registry): EchoMetrics => ({
    profiles: new Counter({
      name: 'profiles_echo_profiles_total',
      help: 'Profiles recorded, by API (ingest or push; a push series counts once per sample).',
      labelNames: ['component_id', 'api'],
      registers: [registry],
    }),
    bytes: new Counter({
      name: 'profiles_echo_bytes_total',
      help: 'Bytes of profiles recorded.',
      labelNames: ['component_id'],
      registers: [registry],
    }),
    errors: new Counter({
      name: 'profiles_echo_write_errors_total',
      help: 'Records that could not be written.',
      labelNames: ['component_id'],
      registers: [registry],
    }),
  }),
);

export const profilesEchoComponent = defineComponent({
  name: 'profiles.echo',
  doc: 'Records received profiles as JSON lines to stdout or a file, optionally keeping raw bodies.',
  exportNames: ['receiver'],
  fields: {
    path: { kind: t.string, default: '', doc: 'File to append JSON lines to; empty means stdout.' },
    raw_dir: { kind: t.string, default: '', doc: 'Directory each raw profile body is written to; empty keeps none.' },
  },
  validate: (values, checks) => ({ path: outputPath(values.path, 'path', checks), rawDir: outputPath(values.raw_dir, 'raw_dir', checks) }),
  build(args, ctx) {
    return new ProfilesEchoComponent(new ProfilesEcho(args.values.path, args.values.rawDir, ctx));
  },
});

/** The options of `profilesEcho`: profiles.echo's attributes, as a config writes them. */
export interface ProfilesEchoOptions {
  /** File to append JSON lines to; empty (the default) means `run.stdout`, else stdout. */
  readonly path?: string;
  /** Directory each raw profile body is written to; empty (the default) keeps none. */
  readonly raw_dir?: string;
}

/**
 * profiles.echo as a sink to use in code: a `ProfilesReceiver` and an Observer of deliveries that
 * records each profile as one JSON line and acknowledges it once the line is written. The file
 * and `raw_dir` are opened and made at once. Counts the component's metrics under `component_id`
 * (the `run.id`, `profiles.echo` by default). Invalid options throw the component's ConfigError texts.
 *
 * @example
 * profilesReceiver().subscribe(profilesEcho({ path: 'profiles.jsonl' }));
 */
export function profilesEcho(options: ProfilesEchoOptions = {}, run?: RunOptions): ProfilesSink {
  const output = componentOptions(profilesEchoComponent, options, [profilesEchoComponent.name]);
  const echo = new ProfilesEcho(output.path, output.rawDir, standaloneContext(profilesEchoComponent.name, run));
  void echo.start();
  return profilesSink(echo.receiver, () => echo.stop());
}

/** The component: the echo, exported as its `receiver`. */
class ProfilesEchoComponent {
  readonly exports;

  constructor(private readonly echo: ProfilesEcho) {
    this.exports = { receiver: profilesReceiverCapsule(echo.receiver) };
  }

  health() {
    return healthy();
  }

  start(): Promise<void> {
    return this.echo.start();
  }

  update(): void {
    // The output is fixed for the component's life; a changed path takes effect on restart.
  }

  stop(): Promise<void> {
    return this.echo.stop();
  }
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Records profiles as JSON lines: what the component and `profilesEcho` share. */
class ProfilesEcho {
  readonly receiver: ProfilesReceiver;
  private readonly stdout: NodeJS.WritableStream;
  private file: WriteStream | undefined;
  private rawDirMade: Promise<unknown> | undefined;
  private sequence = 0;
  private readonly metrics: EchoMetrics;
  private readonly componentId: string;
  /**
   * Keeps raw file names unique across runs that share a directory. The wall clock, not the
   * component's: two runs on a virtual clock would start at the same time and share names.
   */
  private readonly runId = Date.now().toString(36);

  constructor(
    private readonly path: string,
    private readonly rawDir: string,
    ctx: ComponentContext,
  ) {
    this.metrics = echoMetrics(ctx.registry);
    this.componentId = ctx.id;
    this.stdout = ctx.stdout;
    this.receiver = {
      append: (series, signal) => this.recordPush(series, signal),
      appendIngest: (profile, signal) => this.recordIngest(profile, signal),
    };
  }

  async start(): Promise<void> {
    this.output();
    // A directory that cannot be made fails each profile that would be kept there, as a file does.
    if (this.rawDir) await this.madeRawDir().catch(() => {});
  }

  /** Stdout, or the file, opened on first use: at start, or by a profile that comes before it. */
  private output(): NodeJS.WritableStream {
    if (!this.path) return this.stdout;
    if (this.file === undefined) {
      this.file = createWriteStream(this.path, { flags: 'a' });
      // A file that cannot be opened fails every write (counted), instead of crashing the process.
      this.file.on('error', () => {});
    }
    return this.file;
  }

  private madeRawDir(): Promise<unknown> {
    this.rawDirMade ??= mkdir(this.rawDir, { recursive: true });
    return this.rawDirMade;
  }

  async stop(): Promise<void> {
    const file = this.file;
    if (file) await new Promise<void>((resolve) => file.end(resolve));
  }

  private async recordIngest(profile: IngestProfile, signal: AbortSignal): Promise<void> {
    const seq = ++this.sequence;
    const record: Record<string, unknown> = {
      api: 'ingest',
      labels: labelsToObject(profile.labels),
      content_type: profile.contentType,
      path: profile.path,
      query: profile.rawQuery,
      size: profile.body.byteLength,
      sha256: sha256(profile.body),
      deadline: deadlineText(signal),
    };
    if (this.rawDir) record.raw_file = await this.keep(`ingest-${seq}`, profile.body);
    await this.write(record);
    this.metrics.profiles.inc({ component_id: this.componentId, api: 'ingest' });
    this.metrics.bytes.inc({ component_id: this.componentId }, profile.body.byteLength);
  }

  private async recordPush(series: PushSeries, signal: AbortSignal): Promise<void> {
    const seq = ++this.sequence;
    const samples = await Promise.all(
      series.samples.map(async (sample, i) => {
        const entry: Record<string, unknown> = { id: sample.id, size: sample.rawProfile.byteLength, sha256: sha256(sample.rawProfile) };
        if (this.rawDir) entry.raw_file = await this.keep(`push-${seq}-${i}`, sample.rawProfile);
        return entry;
      }),
    );
    await this.write({ api: 'push', labels: labelsToObject(series.labels), samples, deadline: deadlineText(signal) });
    this.metrics.profiles.inc({ component_id: this.componentId, api: 'push' }, series.samples.length);
    const bytes = series.samples.reduce((sum, sample) => sum + sample.rawProfile.byteLength, 0);
    this.metrics.bytes.inc({ component_id: this.componentId }, bytes);
  }

  private async keep(name: string, bytes: Uint8Array): Promise<string> {
    const file = join(this.rawDir, `${this.runId}-${name}.bin`);
    await this.madeRawDir();
    await writeFile(file, bytes);
    return file;
  }

  /** Resolves once the stream has taken the line, so a slow disk slows the sender. */
  private write(record: Record<string, unknown>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.output().write(JSON.stringify(record) + '\n', (err) => {
        if (!err) return resolve();
        this.metrics.errors.inc({ component_id: this.componentId });
        reject(err);
      });
    });
  }
}

function deadlineText(signal: AbortSignal): string | null {
  const deadline = deadlineOf(signal);
  return deadline === undefined ? null : new Date(deadline).toISOString();
}
