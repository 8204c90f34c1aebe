/**
 * The listener lifecycle shared by receivers that run their own HTTP server: starting it, replacing
 * it when the `http` block changes, closing it on stop, and the health that follows from whether
 * the address could be bound, and the connection gauges that follow the running listener.
 *
 * An unchanged `http` block keeps the running listener as it is. A changed one replaces it
 * gracefully: on the same address the new listener takes the old one's listening socket over, so
 * no connection is refused or dropped in between; on another address the old one stops listening
 * first. Either way the old listener serves the connections it has, requests in flight included,
 * each response closing its connection, until they go; none is reset.
 */
import { healthy, unhealthy, type ComponentContext, type Health } from '../../core/runtime/component.js';
import type { ConnectionGauges } from './connection-gauges.js';
import { sameHttpConfig, type HttpServerConfig } from './schema.js';
import { startHttpServer, type HttpHandler, type RunningHttpServer } from './server.js';

export interface ManagedListenerOptions {
  readonly handler: HttpHandler;
  readonly log: ComponentContext['log'];
  /** Read when a listener closes, so the grace period is the one configured at that moment. */
  readonly graceMs: () => number;
  /** Reset as each listener starts, kept at the running listener's count, removed on stop. */
  readonly gauges?: ConnectionGauges;
  readonly onAcceptError?: (err: Error) => void;
}

/**
 * One component's HTTP listener across configuration updates.
 *
 * Starts, restarts and closes are serialized on one promise chain: an update may arrive while a
 * previous listener is still closing (waiting out its in-flight requests) or a new one is still
 * binding, and a restart must not bind the port before the old listener has released it, nor may
 * a stop overtake a start and leave a listener running. Each change therefore runs only after the
 * one asked for before it, in the order they were asked for.
 */
export class ManagedListener {
  private server: RunningHttpServer | undefined;
  private state: Health = healthy();
  private transition: Promise<void> = Promise.resolve();
  private started = false;
  /** Bumped per listener, so a closing listener's late connection counts are ignored. */
  private generation = 0;
  /** Replaced listeners still serving the connections they accepted. */
  private readonly retired = new Set<RunningHttpServer>();
  /** The configuration the running listener was started with. */
  private runningConfig: HttpServerConfig | undefined;

  constructor(
    /** The latest `http` block asked for; the one a start or a restart uses. */
    private config: HttpServerConfig,
    private readonly options: ManagedListenerOptions,
  ) {}

  /** Unhealthy while the latest configuration could not be bound. */
  health(): Health {
    return this.state;
  }

  async start(): Promise<void> {
    this.started = true;
    await this.restart(this.config);
  }

  /**
   * Takes a new `http` block: the listener restarts only when it changed (or no listener is
   * running, so a fixed address can be retried); otherwise the running one stays.
   */
  reconfigure(next: HttpServerConfig): void {
    const previous = this.config;
    this.config = next;
    if (this.started && (!this.server || !sameHttpConfig(previous, next))) void this.restart(next);
    else if (this.server) this.state = healthy();
  }

  /** Resolves once every listener change asked for so far has happened (or failed). */
  settled(): Promise<void> {
    return this.transition;
  }

  /** The running listener's base URL, e.g. `http://127.0.0.1:8080`. */
  url(): string | undefined {
    return this.server?.url;
  }

  /** The running listener, if any; undefined while stopped, restarting or after a failed bind. */
  running(): RunningHttpServer | undefined {
    return this.server;
  }

  /**
   * Closes the listener, and any replaced one still serving, once the changes already asked for
   * are done; requests in flight get the grace period.
   */
  async stop(): Promise<void> {
    this.started = false;
    this.transition = this.transition.then(async () => {
      const closing = [...this.retired].map((server) => server.close(this.options.graceMs()));
      await Promise.all([this.closeServer(), ...closing]);
    });
    await this.transition;
    this.options.gauges?.remove();
  }

  private restart(config: HttpServerConfig): Promise<void> {
    this.transition = this.transition.then(async () => {
      // On the same address the new listener takes the old one's socket over; elsewhere the old
      // one gives its address up first.
      const running = this.server;
      const takeOver =
        running && this.runningConfig?.listenAddress === config.listenAddress && this.runningConfig.listenPort === config.listenPort;
      if (!takeOver || !this.started) await this.retireServer();
      if (!this.started) return;
      const { handler, log, gauges, onAcceptError } = this.options;
      try {
        const generation = ++this.generation;
        gauges?.reset(config.connLimit);
        const predecessor = takeOver ? this.handOver(running) : undefined;
        this.server = await startHttpServer(
          config,
          handler,
          {
            // A listener being replaced keeps counting as it closes; only the newest one is shown.
            onConnections: (n) => {
              if (generation === this.generation) gauges?.connections(n);
            },
            onAcceptError,
          },
          predecessor,
        );
        this.runningConfig = config;
        if (predecessor) void running!.retire().drained.finally(() => this.retired.delete(running!));
        this.state = healthy();
        log('info', 'now listening for http traffic', { addr: this.server.url });
      } catch (err) {
        // A listener that could not take over is closed, as a failed restart leaves none running.
        if (takeOver) void running!.close(this.options.graceMs()).finally(() => this.retired.delete(running!));
        const message = `failed to start server: ${(err as Error).message}`;
        this.state = unhealthy(message);
        log('error', message);
      }
    });
    return this.transition;
  }

  private async closeServer(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.generation++;
    if (server) await server.close(this.options.graceMs());
  }

  /** Hands the running listener over to its successor, which retires it once it has its socket. */
  private handOver(server: RunningHttpServer): { server: RunningHttpServer; graceMs: number } {
    this.server = undefined;
    this.retired.add(server);
    return { server, graceMs: this.options.graceMs() };
  }

  /**
   * Frees the address for the next listener without cutting a connection short: the replaced
   * listener stops accepting and serves what it has accepted until it drains, in the background.
   */
  private async retireServer(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.generation++;
    if (!server) return;
    const { released, drained } = server.retire(this.options.graceMs());
    this.retired.add(server);
    void drained.finally(() => this.retired.delete(server));
    await released;
  }
}
