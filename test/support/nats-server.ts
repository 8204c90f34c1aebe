/**
 * A real nats-server with JetStream for tests and benchmarks: listens on 127.0.0.1 at a free
 * port, stores in its own temporary directory, and can be stopped and started again on the same
 * port and store (an outage the clients must live through). Callers stop it in a finally block or
 * afterEach.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll } from 'vitest';
import { has, needs, requireBinary } from './system-binaries.js';

/** Whether a `nats-server` executable is installed (see system-binaries.ts). */
export function natsServerInstalled(): boolean {
  return has('nats-server');
}

export interface NatsServer {
  readonly url: string;
  readonly port: number;
  readonly storeDir: string;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s); the port then refuses connections. */
  stop(): Promise<void>;
  /** Starts it again on the same port and store. */
  start(): Promise<void>;
  /** Stops it and removes its store. */
  close(): Promise<void>;
  output(): string;
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startNatsServer(extraArgs: readonly string[] = []): Promise<NatsServer> {
  const storeDir = mkdtempSync(join(tmpdir(), 'rivulet-nats-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';

  const start = async () => {
    if (child) return;
    const proc = spawn(requireBinary('nats-server'), ['-js', '-sd', storeDir, '-a', '127.0.0.1', '-p', String(port), ...extraArgs], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    proc.stdout!.resume();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`nats-server did not start:\n${output}`)), 15_000);
      proc.stderr!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Server is ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`nats-server exited with ${code}:\n${output}`));
      });
    });
  };

  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGTERM');
    const force = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(force);
  };

  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    stop,
    start,
    async close() {
      await stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
    output: () => output,
  };
}

/** What `natsServerForTests` gives a test file. */
export interface NatsTestServer {
  /** Whether the program is here (`skip` outside CI when it is not), and titles saying so. */
  readonly program: ReturnType<typeof needs>;
  /** Run after each test, newest first: stop what the test started. */
  readonly cleanups: Array<() => Promise<void>>;
  /** The running server (after the file's `beforeAll`). */
  readonly server: NatsServer;
  /** A stream name not used before in this file: `prefix` and a counter. */
  nextStream(): string;
}

/**
 * One nats-server for a test file: started before its tests (unless the program is missing
 * outside CI) and stopped after them, with cleanups run after each test and fresh stream names.
 */
export function natsServerForTests(prefix: string): NatsTestServer {
  const program = needs('nats-server');
  const cleanups: Array<() => Promise<void>> = [];
  let running: NatsServer | undefined;
  let streams = 0;
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  beforeAll(async () => {
    if (program.skip) return;
    const started = await startNatsServer();
    running = started;
    return () => started.close();
  });
  return {
    program,
    cleanups,
    get server() {
      if (!running) throw new Error('nats-server is not running');
      return running;
    },
    nextStream: () => `${prefix}${++streams}`,
  };
}
