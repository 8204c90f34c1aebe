/**
 * The load generator and the fake Loki of the `cores` and `costs` benches, in a process of their
 * own so that the Rivulet process's CPU time is its own work alone. Started by instance.ts with
 * an IPC channel: it builds the end-to-end bench's Kubernetes pushes, starts a push endpoint that
 * decodes and counts what arrives, and sends `{ sinkUrl, entries }`; then, for each
 * `{ drive: URL, delivered: boolean }`, it pushes every body to URL (waiting for the endpoint to
 * have counted every entry when `delivered`) and answers `{ wallSeconds }`.
 */
import { drive, workload } from './e2e.js';
import { countingSink } from './pushes.js';

export interface DriveRequest {
  readonly drive: string;
  readonly delivered: boolean;
}

const load = workload();
const sink = await countingSink();
process.on('message', (message: DriveRequest) => {
  sink.reset();
  const delivered = message.delivered ? sink.entries : () => load.entries;
  drive(message.drive, load, delivered).then(
    (wallSeconds) => process.send!({ wallSeconds }),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
});
process.on('disconnect', () => process.exit(0));
process.send!({ sinkUrl: sink.url, entries: load.entries });
