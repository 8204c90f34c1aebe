/**
 * The worker side of a partitioned pipeline: builds the stage list once and runs every batch the
 * main thread sends through it, answering with what the pipeline forwarded. Outputs produced while
 * a batch is pushed carry the seq of the entry that caused them, so the main thread can interleave
 * the workers' answers in the order one thread would have produced.
 */
import type { MessagePort } from 'node:worker_threads';
import { Registry } from 'prom-client';
import { ManualClock, systemClock } from '../clock.js';
import { HandBack } from '../hand-back.js';
import { sharedInputTime } from '../input-time.js';
import type { Entry } from '../entry.js';
import { formatEntry } from '../entry-json.js';
import { configErrorsOf } from '../../lib/config/errors.js';
import { decodeEntries, encodeEntries, packedBuffers, type PackedEntries } from './entry-batch-codec.js';
import type { FromPartitionWorker, PackedItems, PartitionItem, PartitionWorkerSetup, ToPartitionWorker } from './partition-messages.js';
import { loadStageList, startProcessRun, type ProcessRun } from '../process.js';

export function servePartition(port: MessagePort, setup: PartitionWorkerSetup): void {
  // Typed arrays are handed over, not copied.
  const post = (message: FromPartitionWorker) => port.postMessage(message, transferablesOf(message));
  const registry = new Registry();
  const manual = setup.virtualStartNs === undefined ? undefined : new ManualClock(BigInt(setup.virtualStartNs));
  const clock = manual ?? systemClock();
  const input = setup.inputTime && !manual ? sharedInputTime(setup.inputTime, clock.scheduler) : undefined;
  const present = (entry: Entry): PartitionItem => {
    if (setup.output !== 'entries') return formatEntry(entry, setup.output);
    // A component hands entries on without their extracted map; no need to copy it across.
    entry.extracted = {};
    return entry;
  };
  const pack = (items: PartitionItem[]): PackedItems =>
    setup.output === 'entries' ? { packed: encodeEntries(items as Entry[]) } : joinLines(items as string[]);

  // Where forwarded outputs go: the current batch's answer, or the next timer emission.
  let batch: { items: PartitionItem[]; seqs: number[]; seq: number } | undefined;
  /** The hand-backs of the batches taken in, by id, and the one of the batch being pushed. */
  const handBacks = new Map<number, HandBack>();
  let pushing: HandBack | undefined;
  let emitted: PartitionItem[] = [];
  let emitScheduled = false;
  let ending = false;
  /** Batches not settled yet: the end waits for them, so none is left waiting when the thread ends. */
  const unsettled = new Set<Promise<void>>();
  let finished!: () => void;
  const completed = new Promise<void>((resolve) => (finished = resolve));

  let run: ProcessRun;
  try {
    run = startProcessRun(loadStageList(setup.stagesText, setup.file), {
      clock,
      ...(input ? { input } : {}),
      currentHandBack: () => pushing,
      registry,
      onEntry: (entry) => {
        const item = present(entry);
        if (batch) {
          batch.items.push(item);
          batch.seqs.push(batch.seq);
          return;
        }
        emitted.push(item);
        if (!emitScheduled && !ending) {
          emitScheduled = true;
          setImmediate(flushEmitted);
        }
      },
      onComplete: () => finished(),
    });
  } catch (err) {
    post({ kind: 'failed', errors: configErrorsOf(err).map((e) => e.message) });
    return;
  }

  function flushEmitted(): void {
    emitScheduled = false;
    if (emitted.length === 0 || ending) return;
    post({ kind: 'emit', items: pack(emitted) });
    emitted = [];
  }

  function processBatch(id: number, packed: PackedEntries, seqs: Int32Array, untilSentOn: boolean, handBackId?: number): void {
    const entries = decodeEntries(packed);
    // Timer outputs not yet sent came before this batch.
    flushEmitted();
    batch = { items: [], seqs: [], seq: 0 };
    if (handBackId !== undefined && !handBacks.has(handBackId)) handBacks.set(handBackId, new HandBack());
    pushing = handBackId === undefined ? undefined : handBacks.get(handBackId);
    try {
      for (let i = 0; i < entries.length; i++) {
        batch.seq = seqs[i]!;
        run.pushOwned(entries[i]!);
      }
    } finally {
      const answer = batch;
      batch = undefined;
      pushing = undefined;
      post({ kind: 'outputs', id, items: pack(answer.items), seqs: Int32Array.from(answer.seqs) });
    }
    const settling = Promise.all([run.pending(), untilSentOn ? run.held() : undefined]).then(() => {
      flushEmitted();
      post({ kind: 'settled', id });
    });
    unsettled.add(settling);
    void settling.finally(() => unsettled.delete(settling));
  }

  async function end(): Promise<void> {
    ending = true;
    run.end();
    manual?.runAll();
    await completed;
    // Ending released every hold; the batches waiting on one settle before the thread says it ended.
    await Promise.all(unsettled);
    const items = emitted;
    emitted = [];
    // Not disposed: disposing stages takes their metric series away, and the main thread still
    // reads them before it ends the thread.
    post({ kind: 'ended', items: pack(items) });
  }

  port.on('message', (message: ToPartitionWorker) => {
    if (message.kind === 'batch') processBatch(message.id, message.packed, message.seqs, message.untilSentOn, message.handBack);
    else if (message.kind === 'handBack') {
      const handBack = handBacks.get(message.id);
      handBacks.delete(message.id);
      if (message.end) handBack?.end();
      else handBack?.request();
    } else if (message.kind === 'end') void end();
    else void registry.getMetricsAsJSON().then((families) => post({ kind: 'metrics', id: message.id, families }));
  });
  post({ kind: 'ready' });
}

function joinLines(lines: readonly string[]): PackedItems {
  const lengths = new Int32Array(lines.length);
  for (let i = 0; i < lines.length; i++) lengths[i] = lines[i]!.length;
  return { text: lines.join(''), lengths };
}

function transferablesOf(message: FromPartitionWorker): ArrayBuffer[] {
  const buffers: ArrayBuffer[] = [];
  if (message.kind === 'outputs') buffers.push(message.seqs.buffer as ArrayBuffer);
  if ('items' in message) {
    if ('lengths' in message.items) buffers.push(message.items.lengths.buffer as ArrayBuffer);
    else buffers.push(...packedBuffers(message.items.packed));
  }
  return buffers;
}
