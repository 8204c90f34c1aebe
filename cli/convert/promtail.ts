import { basename, dirname, extname, join } from 'node:path';
import { LineCounter, parseDocument, type Node } from 'yaml';
import { ConfigError, ConfigErrors } from '../../lib/config/errors.js';
import {
  attribute,
  BLANK,
  configText,
  listLiteral,
  nested,
  objectLiteral,
  stringLiteral,
  type ConfigBlock,
  type ConfigStatement,
} from './config-text.js';
import type { Conversion, ConvertOptions } from './conversion.js';
import { convertStages, mapValue, type StageConversion } from './promtail-stages.js';
import { staticTargets } from './promtail-targets.js';
import { get, isMap, itemsOf, pairsOf, resolveAliases, scalarText, YamlReader } from './yaml-nodes.js';

/** Where Promtail keeps its positions when the config does not say. */
const DEFAULT_POSITIONS_FILE = '/var/log/positions.yaml';

/** Scrape config keys of sources Rivulet has no component for. */
const UNSUPPORTED_SOURCES = new Set([
  'journal',
  'syslog',
  'gcplog',
  'windows_events',
  'kafka',
  'gelf',
  'cloudflare',
  'heroku_drain',
  'azure_event_hubs',
]);

/**
 * Converts a Promtail YAML config into a Rivulet config: each scrape config's `static_configs`
 * become a `logs.source.file` (its targets from `__path__` and the labels), a `loki_push_api` a
 * `logs.source.api`, its `pipeline_stages` a `logs.process` with the equivalent `stage.*` blocks,
 * and each client a `logs.write`. A file holding only `pipeline_stages` converts to the bare stage
 * list `rivulet process` reads. What has no Rivulet equivalent (service discovery, other sources,
 * relabel rules that need discovered labels, unknown stages and fields) is a positioned warning.
 * Throws ConfigErrors, positioned, when the text is not YAML.
 */
export function convertPromtail(text: string, file: string, options: ConvertOptions): Conversion {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0)
    throw new ConfigErrors(
      doc.errors.map((e) => {
        const { line, col } = lineCounter.linePos(e.pos[0]);
        return new ConfigError(e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, ''), { file, line, col, offset: e.pos[0] });
      }),
    );
  resolveAliases(doc);
  const root = doc.contents as Node | null;
  if (!isMap(root))
    throw new ConfigErrors([new ConfigError('expected a Promtail config: a YAML mapping', { file, line: 1, col: 1, offset: 0 })]);
  const yaml = new YamlReader(file, lineCounter);
  const stages: StageConversion = { yaml, keepNames: options.keepNames };
  const keys = pairsOf(root).map((p) => p.key);
  if (keys.length === 1 && keys[0] === 'pipeline_stages') {
    const blocks = convertStages(get(root, 'pipeline_stages'), stages);
    return { output: configText(blocks, file), warnings: yaml.sortedWarnings() };
  }
  const output = configText(new PromtailConfig(root, yaml, stages).blocks(), file);
  return { output, warnings: yaml.sortedWarnings() };
}

class PromtailConfig {
  private readonly labels = new Set<string>();

  constructor(
    private readonly root: Node,
    private readonly yaml: YamlReader,
    private readonly stages: StageConversion,
  ) {}

  blocks(): ConfigBlock[] {
    for (const { key, keyNode } of pairsOf(this.root)) {
      if (['clients', 'client', 'scrape_configs', 'positions', 'target_config', 'global'].includes(key)) continue;
      if (key === 'server')
        this.yaml.warn(
          keyNode,
          'server is not converted: Rivulet serves its HTTP endpoints where `rivulet run --server.http.listen-addr` says',
        );
      else this.yaml.warn(keyNode, `${key} is not converted: Rivulet has no equivalent`);
    }
    for (const [section, known] of [
      ['target_config', 'sync_period'],
      ['global', 'file_watch_config'],
    ] as const)
      for (const { key, keyNode } of pairsOf(get(this.root, section)))
        if (key !== known) this.yaml.warn(keyNode, `${section}: ${key} is not converted: Rivulet has no equivalent`);
    const writers = this.writers();
    const receivers = listLiteral(writers.map((w) => `logs.write.${w.label}.receiver`));
    const jobs = itemsOf(get(this.root, 'scrape_configs'));
    const fileJobs = jobs.filter((job) => get(job, 'static_configs')).length;
    const blocks: ConfigBlock[] = [];
    for (const job of jobs) blocks.push(...this.job(job, receivers, fileJobs));
    return [...blocks, ...writers];
  }

  /** One `logs.write` per client, labelled default, default_1, …. */
  private writers(): ConfigBlock[] {
    const single = get(this.root, 'client');
    const clients = [...(single ? [single] : []), ...itemsOf(get(this.root, 'clients'))];
    if (clients.length === 0) this.yaml.warn(this.root, 'no clients: the converted sources forward to no logs.write');
    const writers: ConfigBlock[] = [];
    for (const client of clients) {
      const url = scalarText(get(client, 'url'));
      if (url === undefined) {
        this.yaml.warn(client, 'a client without a url is not converted');
        continue;
      }
      const label = writers.length === 0 ? 'default' : `default_${writers.length}`;
      writers.push(this.writer(client, label));
    }
    return writers;
  }

  private writer(client: Node, label: string): ConfigBlock {
    const endpoint: ConfigStatement[] = [];
    const body: ConfigStatement[] = [];
    const text = (name: string, value: Node | null) => {
      const s = scalarText(value);
      if (s !== undefined) endpoint.push(attribute(name, stringLiteral(s)));
    };
    for (const { key, keyNode, value } of pairsOf(client)) {
      switch (key) {
        case 'url':
        case 'tenant_id':
        case 'name':
        case 'bearer_token':
        case 'bearer_token_file':
          text(key, value);
          break;
        case 'batchwait':
          text('batch_wait', value);
          break;
        case 'timeout':
          text('remote_timeout', value);
          break;
        case 'batchsize': {
          const size = scalarText(value);
          if (size !== undefined) endpoint.push(attribute('batch_size', stringLiteral(byteSizeText(size))));
          break;
        }
        case 'headers':
          this.optional(endpoint, 'headers', mapValue(value, this.yaml, 'client: headers'));
          break;
        case 'drop_rate_limited_batches': {
          const drop = scalarText(value);
          if (drop === 'true' || drop === 'false') endpoint.push(attribute('retry_on_http_429', drop === 'true' ? 'false' : 'true'));
          break;
        }
        case 'backoff_config':
          for (const b of pairsOf(value)) {
            const name = { min_period: 'min_backoff_period', max_period: 'max_backoff_period', max_retries: 'max_backoff_retries' }[b.key];
            const v = scalarText(b.value);
            if (name === undefined)
              this.yaml.warn(b.keyNode, `client: backoff_config: ${b.key} is not converted: logs.write has no equivalent`);
            else if (v !== undefined) endpoint.push(attribute(name, b.key === 'max_retries' ? v : stringLiteral(v)));
          }
          break;
        case 'basic_auth': {
          const auth: ConfigStatement[] = [];
          for (const a of pairsOf(value)) {
            const v = scalarText(a.value);
            if (!['username', 'password', 'password_file'].includes(a.key))
              this.yaml.warn(a.keyNode, `client: basic_auth: ${a.key} is not converted: logs.write has no equivalent`);
            else if (v !== undefined) auth.push(attribute(a.key, stringLiteral(v)));
          }
          endpoint.push(nested({ name: 'basic_auth', body: auth }));
          break;
        }
        case 'external_labels':
          this.optional(body, 'external_labels', mapValue(value, this.yaml, 'client: external_labels'));
          break;
        default:
          this.yaml.warn(keyNode, `client: ${key} is not converted: logs.write has no equivalent`);
      }
    }
    return { name: 'logs.write', label, body: [nested({ name: 'endpoint', body: endpoint }), ...body] };
  }

  /** The components of one scrape config: its sources, then its pipeline. */
  private job(job: Node, writers: string, fileJobs: number): ConfigBlock[] {
    const name = scalarText(get(job, 'job_name')) ?? 'job';
    const label = this.uniqueLabel(name);
    const stageBlocks = convertStages(get(job, 'pipeline_stages'), this.stages);
    const destination = stageBlocks.length > 0 ? `[logs.process.${label}.receiver]` : writers;
    const blocks: ConfigBlock[] = [];
    for (const { key, keyNode } of pairsOf(job)) {
      if (['job_name', 'pipeline_stages', 'static_configs', 'relabel_configs', 'loki_push_api'].includes(key)) continue;
      if (key.endsWith('_sd_configs'))
        this.yaml.warn(keyNode, `${key} is not converted: Rivulet has no service discovery; list the files in static_configs`);
      else if (UNSUPPORTED_SOURCES.has(key)) this.yaml.warn(keyNode, `${key} is not converted: Rivulet has no ${key} source`);
      else this.yaml.warn(keyNode, `${key} is not converted: Rivulet has no equivalent`);
    }
    const statics = get(job, 'static_configs');
    if (statics) blocks.push(this.fileSource(job, statics, label, destination, fileJobs));
    else
      for (const rule of itemsOf(get(job, 'relabel_configs')))
        this.yaml.warn(
          rule,
          'relabel rule not converted: Rivulet has no relabel component, and only static_configs targets are relabelled here',
        );
    const push = get(job, 'loki_push_api');
    if (push) blocks.push(this.pushSource(push, label, destination));
    if (stageBlocks.length > 0) {
      const body: ConfigStatement[] = [attribute('forward_to', writers)];
      for (const stage of stageBlocks) body.push(BLANK, nested(stage));
      blocks.push({ name: 'logs.process', label, body });
    }
    return blocks;
  }

  private fileSource(job: Node, statics: Node, label: string, destination: string, fileJobs: number): ConfigBlock {
    const targets = staticTargets(statics, get(job, 'relabel_configs'), this.yaml);
    const body: ConfigStatement[] = [
      attribute(
        'targets',
        targets.length === 0
          ? '[]'
          : `[\n${targets.map((t) => `${objectLiteral(Object.entries(t).map(([k, v]) => [k, stringLiteral(v)] as const))},\n`).join('')}]`,
      ),
      attribute('forward_to', destination),
      attribute('positions_file', stringLiteral(this.positionsFile(label, fileJobs))),
    ];
    const positions = get(this.root, 'positions');
    for (const { key, keyNode, value } of pairsOf(positions)) {
      const v = scalarText(value);
      if (key === 'sync_period' && v !== undefined) body.push(attribute('positions_sync_period', stringLiteral(v)));
      else if (key !== 'filename') this.yaml.warn(keyNode, `positions: ${key} is not converted: logs.source.file has no equivalent`);
    }
    const watch = get(get(this.root, 'global'), 'file_watch_config');
    const watchBody: ConfigStatement[] = [];
    for (const { key, keyNode, value } of pairsOf(watch)) {
      const v = scalarText(value);
      if ((key === 'min_poll_frequency' || key === 'max_poll_frequency') && v !== undefined)
        watchBody.push(attribute(key, stringLiteral(v)));
      else this.yaml.warn(keyNode, `global: file_watch_config: ${key} is not converted: logs.source.file has no equivalent`);
    }
    if (watchBody.length > 0) body.push(BLANK, nested({ name: 'file_watch', body: watchBody }));
    const syncPeriod = scalarText(get(get(this.root, 'target_config'), 'sync_period'));
    if (syncPeriod !== undefined)
      body.push(BLANK, nested({ name: 'file_match', body: [attribute('sync_period', stringLiteral(syncPeriod))] }));
    return { name: 'logs.source.file', label, body };
  }

  /**
   * Rivulet keeps positions as JSON, so Promtail's YAML positions file is not reused: each file
   * source gets a JSON file beside it (one per job when there are several), and the files are read
   * from their start once.
   */
  private positionsFile(label: string, fileJobs: number): string {
    const node = get(get(this.root, 'positions'), 'filename');
    const promtailFile = scalarText(node) ?? DEFAULT_POSITIONS_FILE;
    const stem = basename(promtailFile, extname(promtailFile));
    const file = join(dirname(promtailFile), fileJobs > 1 ? `${stem}.${label}.json` : `${stem}.json`);
    if (node && !this.warnedPositions) {
      this.warnedPositions = true;
      this.yaml.warn(
        node,
        `Promtail's positions are not carried over: logs.source.file keeps its own, as JSON, in ${fileJobs > 1 ? `${stem}.<job>.json files beside it` : file}, so the files are read from their start once`,
      );
    }
    return file;
  }

  private warnedPositions = false;

  private pushSource(push: Node, label: string, destination: string): ConfigBlock {
    const http: ConfigStatement[] = [];
    const body: ConfigStatement[] = [];
    for (const { key, keyNode, value } of pairsOf(push)) {
      const v = scalarText(value);
      if (key === 'labels') this.optional(body, 'labels', mapValue(value, this.yaml, 'loki_push_api: labels'));
      else if (key === 'use_incoming_timestamp' && (v === 'true' || v === 'false')) body.push(attribute(key, v));
      else if (key === 'server')
        for (const s of pairsOf(value)) {
          const sv = scalarText(s.value);
          if (s.key === 'http_listen_port' && sv !== undefined) http.push(attribute('listen_port', sv));
          else if (s.key === 'http_listen_address' && sv !== undefined) http.push(attribute('listen_address', stringLiteral(sv)));
          // Promtail's configs set a gRPC port of 0 to turn gRPC off; logs.source.api has none to turn off.
          else if (s.key !== 'grpc_listen_port' || sv !== '0')
            this.yaml.warn(s.keyNode, `loki_push_api: server: ${s.key} is not converted: logs.source.api has no equivalent`);
        }
      else this.yaml.warn(keyNode, `loki_push_api: ${key} is not converted: logs.source.api has no equivalent`);
    }
    return { name: 'logs.source.api', label, body: [nested({ name: 'http', body: http }), ...body, attribute('forward_to', destination)] };
  }

  /** Adds the attribute when there is a value to write. */
  private optional(body: ConfigStatement[], name: string, value: string | undefined): void {
    if (value !== undefined) body.push(attribute(name, value));
  }

  /** A component label from a job name, as the reference's converter makes one, unique here. */
  private uniqueLabel(jobName: string): string {
    let label = jobName.replace(/[^\p{L}\p{Nd}_]/gu, '_');
    if (!/^[\p{L}_]/u.test(label)) label = `_${label}`;
    let unique = label;
    for (let n = 2; this.labels.has(unique); n++) unique = `${label}_${n}`;
    this.labels.add(unique);
    return unique;
  }
}

/** Promtail's batch size (bytes, a number) as a size string: `1048576` → `1MiB`. */
function byteSizeText(text: string): string {
  if (!/^\d+$/.test(text)) return text;
  const bytes = Number(text);
  if (bytes > 0 && bytes % 1048576 === 0) return `${bytes / 1048576}MiB`;
  if (bytes > 0 && bytes % 1024 === 0) return `${bytes / 1024}KiB`;
  return `${bytes}B`;
}
