/** A component graph on virtual time for tests that load configs and send entries to a component by hand. */
import { PassThrough } from 'node:stream';
import { Registry } from 'prom-client';
import { expect } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import type { Entry } from '../../core/entry.js';
import { LOGS_RECEIVER, type LogsReceiver } from '../../core/receiver.js';
import { ComponentGraph } from '../../core/runtime/graph.js';
import { ConfigErrors } from '../../lib/config/errors.js';
import '../../index.js';

/** A graph whose components share one registry, a ManualClock at 0 and one stdout kept as `output()`. */
export function newGraph(): { graph: ComponentGraph; registry: Registry; output: () => string } {
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (chunk) => (text += chunk));
  const registry = new Registry();
  const graph = new ComponentGraph((id) => ({ id, clock: new ManualClock(0n), registry, stdout, log: () => {} }));
  return { graph, registry, output: () => text };
}

/** The messages of the ConfigErrors `fn` throws, [] when it throws none; any other error is rethrown. */
export function errorsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigErrors) return err.errors.map((e) => e.message);
    throw err;
  }
  return [];
}

/** The logs receiver component `id` exports as `receiver`, checked to be one. */
export function receiverOf(graph: ComponentGraph, id: string): LogsReceiver {
  const capsule = graph.component(id)!.exports.receiver as { capsule: string; value: LogsReceiver };
  expect(capsule.capsule).toBe(LOGS_RECEIVER);
  return capsule.value;
}

/** An entry of `line` and `labels` at 1 s after the epoch, with no metadata. */
export const entry = (line: string, labels: Record<string, string> = {}): Entry => ({
  labels,
  line,
  timestamp: 1_000_000_000n,
  structuredMetadata: [],
  extracted: {},
});
