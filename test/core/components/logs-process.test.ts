import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import type { Entry } from '../../../core/entry.js';
import type { LogsReceiver } from '../../../core/receiver.js';
import { ComponentGraph } from '../../../core/runtime/graph.js';
import { makeCapsule } from '../../../lib/config/evaluate.js';
import { defineComponent, healthy } from '../../../core/runtime/component.js';
import { t } from '../../../lib/config/schema.js';
import '../../../index.js';

/** A sink component that records what it receives, for observing logs.process from outside. */
const received: string[] = [];
const receivedEntries: Entry[] = [];
defineComponent({
  name: 'test.collect',
  doc: 'Records received lines.',
  exportNames: ['receiver'],
  fields: { unused: { kind: t.string, default: '', doc: 'Nothing.' } },
  build: () => {
    const receiver: LogsReceiver = {
      send: async (entries) => {
        for (const e of entries) {
          received.push(e.line);
          receivedEntries.push(e);
        }
      },
    };
    return {
      exports: { receiver: makeCapsule('logs.receiver', receiver) },
      health: () => healthy(),
      update: () => {},
      stop: async () => {},
    };
  },
});

const entry = (line: string): Entry => ({ labels: { app: 'a' }, line, timestamp: 1n, structuredMetadata: [], extracted: {} });

function graphWith(stages: string, clock: ManualClock): ComponentGraph {
  const registry = new Registry();
  const graph = new ComponentGraph((id) => ({ id, clock, registry, stdout: process.stdout, log: () => {} }));
  graph.load(`logs.process "p" {\n${stages}\n  forward_to = [test.collect.out.receiver]\n}\ntest.collect "out" { }\n`, 'p.alloy');
  return graph;
}

function receiverOf(graph: ComponentGraph): LogsReceiver {
  return (graph.component('logs.process.p')!.exports.receiver as { value: LogsReceiver }).value;
}

describe('logs.process component', () => {
  it('acknowledges a batch only after a waiting limit has released and forwarded it', async () => {
    received.length = 0;
    const clock = new ManualClock(0n);
    const graph = graphWith('  stage.limit {\n    rate = 1\n    burst = 1\n  }', clock);
    let acknowledged = false;
    const ack = receiverOf(graph)
      .send([entry('a'), entry('b'), entry('c')])
      .then(() => (acknowledged = true));
    await Promise.resolve();
    expect(received).toEqual(['a']);
    clock.advanceBy(1000);
    await new Promise((r) => setImmediate(r));
    expect(acknowledged).toBe(false);
    clock.advanceBy(1000);
    await ack;
    expect(received).toEqual(['a', 'b', 'c']);
    await graph.stop();
  });

  it('acknowledges a send that asks for it only once the lines an open multiline block holds were sent on', async () => {
    received.length = 0;
    const clock = new ManualClock(0n);
    const graph = graphWith('  stage.multiline {\n    firstline     = "^start"\n    max_wait_time = "2s"\n  }', clock);
    const receiver = receiverOf(graph);
    // A plain send is acknowledged with its block still open, as the reference does.
    await receiver.send([entry('start 1'), entry(' one')]);
    let first = false;
    const waiting = receiver.send([entry(' more')], { untilSentOn: true }).then(() => (first = true));
    let second = false;
    const waitingLonger = receiver.send([entry('start 2')], { untilSentOn: true }).then(() => (second = true));
    await waiting;
    // `start 2` closed the block holding ` more`; its own block stays open.
    expect(received).toEqual(['start 1\n one\n more']);
    await new Promise((r) => setImmediate(r));
    expect([first, second]).toEqual([true, false]);
    clock.advanceBy(2000);
    await waitingLonger;
    expect(received).toEqual(['start 1\n one\n more', 'start 2']);
    await graph.stop();
  });

  it('flushes a pending multiline block into the receivers on stop', async () => {
    received.length = 0;
    const clock = new ManualClock(0n);
    const graph = graphWith('  stage.multiline {\n    firstline = "^start"\n  }', clock);
    await receiverOf(graph).send([entry('start 1'), entry(' more')]);
    expect(received).toEqual([]);
    await graph.stop();
    expect(received).toEqual(['start 1\n more']);
  });

  it('drops the pipeline-private extracted map when entries leave the component', async () => {
    receivedEntries.length = 0;
    const clock = new ManualClock(0n);
    const graph = graphWith('  stage.static_labels { values = { x = "1" } }', clock);
    await receiverOf(graph).send([{ ...entry('z'), extracted: { secret: 's' } }]);
    expect(receivedEntries.map((e) => [e.line, e.labels, e.extracted])).toEqual([['z', { app: 'a', x: '1' }, {}]]);
    await graph.stop();
  });
});
