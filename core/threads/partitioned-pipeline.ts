/**
 * One stage list run on several worker threads, each with its own instance of every stage. A
 * batch is split by the partition plan: by the hash of the partition key's labels when stages keep
 * state (so entries that share state meet on one thread, and each stream keeps its order), or into
 * contiguous slices when no stage keeps any. The answers are put back together by the seq of the
 * entry that caused each output, which is the order one thread would have produced; outputs that
 * timers release come on their own, after everything their thread answered before.
 */
import { Worker } from 'node:worker_threads';
import type { Entry } from '../entry.js';
import type { HandBack } from '../hand-back.js';
import type { MetricFamilies } from '../metrics.js';
import { decodeEntries, encodeEntries, LabelSets, packedBuffers } from './entry-batch-codec.js';
import type {
  FromPartitionWorker,
  PackedItems,
  PartitionItem,
  PartitionWorkerSetup,
  StageListSetup,
  ToPartitionWorker,
} from './partition-messages.js';
import { partitioner, type PartitionPlan } from './partitioning.js';
import { pipelineWorkerModules, type PipelineWorkerModules } from './worker-modules.js';
import { loadedStageModuleFiles } from '../stage-modules.js';
import { linearTimeFallbackEnabled } from '../../lib/regex/linear-time.js';

export interface PartitionedPipelineOptions {
  readonly workers: number;
  /**
   * The stage list. Each thread also loads the stages this thread knows: the built-in stages'
   * module, the custom stage modules loaded here, and the regex engine chosen here.
   */
  readonly setup: StageListSetup;
  /** Where the threads start and what they import to know the built-in stages; by default this build's own. */
  readonly worker?: PipelineWorkerModules;
  /** How to split (a `single` plan is treated as one partition). */
  readonly plan: PartitionPlan;
  /** Outputs timers released on one thread, in that thread's order. */
  readonly onEmit: (items: PartitionItem[]) => void;
  /** A worker stopped or failed outside any batch. */
  readonly onFailure: (error: Error) => void;
}

/** A batch in flight: what each thread answered, and who still has to answer or settle. */
interface BatchInFlight {
  readonly id: number;
  readonly answers: Map<number, { items: PartitionItem[]; seqs: Int32Array }>;
  /** Timer outputs a thread sent before it answered this batch: they come first. */
  readonly before: PartitionItem[][];
  awaitingAnswers: number;
  awaitingSettled: number;
  readonly answered: Deferred<PartitionItem[]>;
  readonly settled: Deferred<void>;
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: Error): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  // Whoever waits sees the failure; nobody waiting is not an unhandled rejection.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

class PartitionThread {
  readonly worker: Worker;
  /** Batches sent to this thread and not answered yet, oldest first. */
  readonly unanswered: BatchInFlight[] = [];
  readonly ready = deferred<void>();
  ended: Deferred<PartitionItem[]> | undefined;
  readonly metricsRequests = new Map<number, Deferred<MetricFamilies>>();

  constructor(entry: URL, setup: PartitionWorkerSetup) {
    this.worker = new Worker(entry, { workerData: setup, execArgv: [] });
  }

  post(message: ToPartitionWorker, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(message, transfer);
  }
}

export class PartitionedPipeline {
  private readonly threads: PartitionThread[];
  private readonly batches = new Map<number, BatchInFlight>();
  private nextId = 0;
  /** The ids of the hand-backs batches came with (see process()). */
  private readonly handBackIds = new Map<HandBack, number>();
  private failure: Error | undefined;
  /** The partition of an entry's labels, for a partitioned plan. */
  private readonly partitionOf: ((labels: Entry['labels']) => number) | undefined;

  constructor(private readonly options: PartitionedPipelineOptions) {
    const { plan } = options;
    this.partitionOf = plan.kind === 'partitioned' ? partitioner(plan.key, options.workers) : undefined;
    const worker = options.worker ?? pipelineWorkerModules();
    const setup: PartitionWorkerSetup = {
      ...options.setup,
      stageRegistrars: worker.stageRegistrars,
      stageModules: loadedStageModuleFiles(),
      linearTimeRegex: linearTimeFallbackEnabled(),
    };
    this.threads = Array.from({ length: options.workers }, () => new PartitionThread(worker.entry, setup));
    this.threads.forEach((thread, index) => {
      thread.worker.on('message', (message: FromPartitionWorker) => this.receive(index, message));
      thread.worker.on('error', (err) => this.fail(err));
      thread.worker.on('exit', (code) => {
        if (!thread.ended) this.fail(new Error(`pipeline worker ${index} exited with code ${code}`));
      });
    });
  }

  /** Settles once every thread has built the stage list; rejects with the config errors if one could not. */
  async ready(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.ready.promise));
  }

  /**
   * Sends a batch through the threads. `outputs` settles with what the stages forwarded while it
   * was pushed, in one thread's order; `settled` once no stage holds any of it back for timing
   * reasons, and with `untilSentOn` once every entry held in a block has been sent on too.
   */
  process(
    entries: readonly Entry[],
    untilSentOn = false,
    handBack?: HandBack,
  ): { outputs: Promise<PartitionItem[]>; settled: Promise<void> } {
    const batch: BatchInFlight = {
      id: this.nextId++,
      answers: new Map(),
      before: [],
      awaitingAnswers: 0,
      awaitingSettled: 0,
      answered: deferred(),
      settled: deferred(),
    };
    if (this.failure) {
      batch.answered.reject(this.failure);
      batch.settled.reject(this.failure);
      return { outputs: batch.answered.promise, settled: batch.settled.promise };
    }
    const sets = new LabelSets();
    const parts = this.split(entries, sets);
    const handBackId = handBack ? this.handBackId(handBack) : undefined;
    parts.forEach((part, index) => {
      if (part.entries.length === 0) return;
      const thread = this.threads[index]!;
      batch.awaitingAnswers++;
      batch.awaitingSettled++;
      thread.unanswered.push(batch);
      const seqs = Int32Array.from(part.seqs);
      const packed = encodeEntries(part.entries, sets, part.setOf);
      thread.post({ kind: 'batch', id: batch.id, packed, seqs, untilSentOn, handBack: handBackId }, [
        seqs.buffer,
        ...packedBuffers(packed),
      ]);
    });
    if (batch.awaitingAnswers === 0) {
      batch.answered.resolve([]);
      batch.settled.resolve();
    } else {
      this.batches.set(batch.id, batch);
    }
    return { outputs: batch.answered.promise, settled: batch.settled.promise };
  }

  /** The id a hand-back crosses to the threads as; its request is passed on to every thread. */
  private handBackId(handBack: HandBack): number {
    let id = this.handBackIds.get(handBack);
    if (id !== undefined) return id;
    id = this.nextId++;
    this.handBackIds.set(handBack, id);
    const known = id;
    const passOn = (end: boolean) => () => {
      this.handBackIds.delete(handBack);
      for (const thread of this.threads) thread.post({ kind: 'handBack', id: known, end });
    };
    handBack.onRequest(passOn(false));
    handBack.onEnd(passOn(true));
    return id;
  }

  /** Ends every thread's input: the stages flush, and what they forward comes back in thread order. */
  async end(): Promise<PartitionItem[]> {
    for (const thread of this.threads) {
      thread.ended = deferred();
      thread.post({ kind: 'end' });
    }
    const flushed = await Promise.all(this.threads.map((t) => t.ended!.promise));
    return flushed.flat();
  }

  /** Every thread's metric families. */
  async metrics(): Promise<MetricFamilies[]> {
    if (this.failure) return [];
    return Promise.all(
      this.threads.map((thread) => {
        const id = this.nextId++;
        const request = deferred<MetricFamilies>();
        thread.metricsRequests.set(id, request);
        thread.post({ kind: 'metrics', id });
        return request.promise;
      }),
    );
  }

  /** Ends the threads; a batch still unanswered or unsettled fails rather than wait forever. */
  async terminate(): Promise<void> {
    for (const thread of this.threads) thread.ended ??= deferred();
    const stopped = new Error('the pipeline threads were stopped');
    for (const batch of this.batches.values()) {
      batch.answered.reject(stopped);
      batch.settled.reject(stopped);
    }
    this.batches.clear();
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }

  /**
   * The batch's parts, one per thread, each with the seqs of its entries and their label sets in
   * `sets` (looked up once per entry, for the partition and the pack alike).
   */
  private split(entries: readonly Entry[], sets: LabelSets): Array<{ entries: Entry[]; seqs: number[]; setOf: number[] }> {
    const count = this.threads.length;
    const parts = Array.from({ length: count }, () => ({ entries: [] as Entry[], seqs: [] as number[], setOf: [] as number[] }));
    const { plan } = this.options;
    // The partition of each set, worked out the first time the set occurs.
    const partOfSet: number[] = [];
    // Nothing is kept between entries when stateless: contiguous slices, put back in order by seq.
    const size = Math.ceil(entries.length / count);
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const set = sets.indexOf(entry.labels);
      let index = 0;
      if (this.partitionOf) index = partOfSet[set] ??= this.partitionOf(entry.labels);
      else if (plan.kind === 'stateless') index = Math.floor(i / size);
      const part = parts[index]!;
      part.entries.push(entry);
      part.seqs.push(i);
      part.setOf.push(set);
    }
    return parts;
  }

  private receive(index: number, message: FromPartitionWorker): void {
    const thread = this.threads[index]!;
    switch (message.kind) {
      case 'ready':
        thread.ready.resolve();
        return;
      case 'failed':
        thread.ready.reject(new Error(message.errors.join('\n')));
        return;
      case 'outputs': {
        const batch = thread.unanswered.shift()!;
        batch.answers.set(index, { items: unpack(message.items), seqs: message.seqs });
        if (--batch.awaitingAnswers === 0) batch.answered.resolve(merge(batch));
        return;
      }
      case 'settled': {
        const batch = this.batches.get(message.id);
        if (batch && --batch.awaitingSettled === 0) {
          this.batches.delete(batch.id);
          batch.settled.resolve();
        }
        return;
      }
      case 'emit':
        // Sent before the thread answered an older batch: those outputs belong ahead of that batch's.
        if (thread.unanswered.length > 0) thread.unanswered[0]!.before.push(unpack(message.items));
        else this.options.onEmit(unpack(message.items));
        return;
      case 'ended':
        thread.ended?.resolve(unpack(message.items));
        return;
      case 'metrics':
        thread.metricsRequests.get(message.id)?.resolve(message.families);
        thread.metricsRequests.delete(message.id);
        return;
    }
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    for (const thread of this.threads) {
      thread.ready.reject(error);
      thread.ended?.reject(error);
      for (const request of thread.metricsRequests.values()) request.reject(error);
    }
    for (const batch of this.batches.values()) {
      batch.answered.reject(error);
      batch.settled.reject(error);
    }
    this.batches.clear();
    this.options.onFailure(error);
  }
}

/** A batch's outputs in one thread's order: earlier timer outputs first, then by the seq of their cause. */
function merge(batch: BatchInFlight): PartitionItem[] {
  const out: PartitionItem[] = batch.before.flat();
  const lists = [...batch.answers.values()];
  if (lists.length === 1) {
    out.push(...lists[0]!.items);
    return out;
  }
  const cursors = lists.map(() => 0);
  for (;;) {
    let best = -1;
    let bestSeq = Number.POSITIVE_INFINITY;
    for (let l = 0; l < lists.length; l++) {
      const seq = lists[l]!.seqs[cursors[l]!];
      if (seq !== undefined && seq < bestSeq) {
        bestSeq = seq;
        best = l;
      }
    }
    if (best < 0) return out;
    const list = lists[best]!;
    // Every output of one cause comes from one thread: take them together.
    while (list.seqs[cursors[best]!] === bestSeq) out.push(list.items[cursors[best]!++]!);
  }
}

function unpack(items: PackedItems): PartitionItem[] {
  if ('packed' in items) return decodeEntries(items.packed);
  const lines: string[] = new Array(items.lengths.length);
  let at = 0;
  for (let i = 0; i < lines.length; i++) {
    const end = at + items.lengths[i]!;
    lines[i] = items.text.slice(at, end);
    at = end;
  }
  return lines;
}
