import { systemClock } from '../core/clock.js';
import { redactUrlsIn } from '../lib/redact.js';
import { streamLog } from '../lib/log.js';
import { configErrorsOf } from '../lib/config/errors.js';
import { addMetricsSource, processRegistry } from '../core/metrics.js';
import { ComponentGraph } from '../core/runtime/graph.js';
import { startRunServer } from './run-server.js';
import { TapHub } from '../core/inspect/tap.js';
import { loadConfigStageModules } from '../core/stage-modules.js';
import { parseArgs, UsageError } from './args.js';
import { coreCount, workerCount } from './pipeline-workers.js';
import { shardCount } from './shards-flag.js';
import { ShardConfigError, ShardedRun, shardedDefinitions } from '../core/shards/sharded-run.js';
import { loadFlagStageModules, readConfigWithStageModules, STAGES_FLAG } from './stage-modules.js';
import { PathError, readTextFile, type Io } from './io.js';

export const DEFAULT_LISTEN_ADDR = '127.0.0.1:12345';

/** Splits `HOST:PORT` (`[::1]:80` for IPv6). */
export function parseListenAddr(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(value);
  if (!m) throw new UsageError(`invalid listen address ${JSON.stringify(value)}, expected HOST:PORT`);
  const port = Number(m[3]);
  if (port > 65535) throw new UsageError(`invalid port ${port} in listen address ${JSON.stringify(value)}`);
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}

/**
 * `rivulet run CONFIG [--server.http.listen-addr HOST:PORT] [--server.http.allowed-hosts NAME,...]
 * [--workers N | --shards N] [--stages PATH]...`: runs each logs.process on N worker threads split
 * by stream (default: one per core), or with `--shards N` runs the whole way from decoding pushes
 * to sending on N shard threads (core/shards/sharded-run.ts), loads custom stage modules, builds every component, serves the run
 * server (answering only the Host names allowed-hosts.ts allows), reloads on SIGHUP and POST
 * /-/reload (loading modules newly named in `stages.import` blocks), and on SIGINT/SIGTERM stops
 * components so stateful stages flush and pending output drains, then resolves 0.
 */
export async function runCommand(argv: readonly string[], io: Io, signals: NodeJS.EventEmitter = process): Promise<number> {
  const args = parseArgs(argv, [], ['server.http.listen-addr', 'server.http.allowed-hosts', 'workers', 'shards'], [STAGES_FLAG]);
  const file = args.positional[0];
  if (!file || args.positional.length > 1) throw new UsageError('run needs exactly one CONFIG file');
  const { host, port } = parseListenAddr((args.flags.get('server.http.listen-addr') as string | undefined) ?? DEFAULT_LISTEN_ADDR);
  const shards = shardCount(args.flags.get('shards'), args.flags.get('workers'));
  const workers = shards > 1 ? 1 : workerCount(args.flags.get('workers'), coreCount());
  if (!(await loadFlagStageModules(args, io))) return 2;
  const initialText = await readConfigWithStageModules(file, io);
  if (initialText === undefined) return 2;
  const registry = processRegistry();
  const clock = systemClock();
  // Components hide the secrets they are given; URL credentials are hidden here once more, for
  // any URL a message or field quotes (a server list, an error naming an address).
  const debug = Boolean(process.env.RIVULET_DEBUG);
  const log = streamLog(io.stderr, { debug, rewrite: redactUrlsIn });
  const taps = new TapHub(registry);
  const sharded =
    shards > 1 ? new ShardedRun({ shards, configText: initialText, configFile: file, log, stdout: io.stdout, debug, taps }) : undefined;
  const graph = new ComponentGraph(
    (id) => ({
      id,
      clock,
      registry,
      stdout: io.stdout,
      log: (level, message, fields) => log(level, message, { component: id, ...fields }),
      pipelineThreads: workers,
      ...(sharded ? { front: sharded } : {}),
    }),
    taps.wrapExport,
    sharded ? shardedDefinitions(sharded) : undefined,
  );
  try {
    graph.load(initialText, file);
  } catch (err) {
    for (const e of configErrorsOf(err)) io.stderr.write(e.message + '\n');
    return 2;
  }
  if (sharded && !(await startShards(sharded, graph, io))) return 2;
  // Every shard counts in a registry of its own; /metrics sums them with the main thread's.
  if (sharded) addMetricsSource(registry, () => sharded.metrics());
  // A config that cannot be read is a failed reload like an invalid one: logged, and answered.
  const reload = async (): Promise<string[]> => {
    let errors: string[];
    try {
      const text = readTextFile(file);
      await loadConfigStageModules(text, file);
      errors = (await graph.reload(text, file)).map((e) => e.message);
      if (sharded) errors.push(...(await sharded.reload(text, errors)));
    } catch (err) {
      errors = err instanceof PathError ? [err.message] : configErrorsOf(err).map((e) => e.message);
    }
    log(
      errors.length > 0 ? 'error' : 'info',
      errors.length > 0 ? 'config reload failed' : 'config reloaded',
      errors.length > 0 ? { errors } : undefined,
    );
    return errors;
  };
  const allowedHosts = ((args.flags.get('server.http.allowed-hosts') as string | undefined) ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const server = await startRunServer({ host, port, registry, graph, reload, taps, allowedHosts });
  log('info', 'now listening for http traffic', { addr: server.url });
  await graph.start();
  log('info', 'running; press Ctrl-C to stop', {
    config: file,
    metrics: `${server.url}/metrics`,
    healthy: `${server.url}/-/healthy`,
    ready: `${server.url}/-/ready`,
    components: `${server.url}/api/v0/components`,
    ui: `${server.url}/`,
  });

  const shardFailure = await new Promise<Error | undefined>((resolve) => {
    const onHup = () => void reload();
    const onSignal = () => onStop(undefined);
    const onStop = (failure: Error | undefined) => {
      signals.off('SIGHUP', onHup);
      signals.off('SIGINT', onSignal);
      signals.off('SIGTERM', onSignal);
      resolve(failure);
    };
    signals.on('SIGHUP', onHup);
    signals.on('SIGINT', onSignal);
    signals.on('SIGTERM', onSignal);
    void sharded?.failed.then(onStop);
  });
  log(
    shardFailure ? 'error' : 'info',
    'shutting down',
    shardFailure ? { reason: 'a shard failed', error: shardFailure.message } : undefined,
  );
  await graph.stop();
  await sharded?.stop(graph.componentIds());
  await server.close();
  return shardFailure ? 1 : 0;
}

/** Starts the shards of a loaded config; false, with their config errors printed, when a shard cannot build it. */
async function startShards(sharded: ShardedRun, graph: ComponentGraph, io: Io): Promise<boolean> {
  try {
    await sharded.start();
  } catch (err) {
    await graph.stop();
    if (!(err instanceof ShardConfigError)) throw err;
    for (const e of err.errors) io.stderr.write(e + '\n');
    return false;
  }
  return true;
}
