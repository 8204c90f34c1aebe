/**
 * Time-based stages: multiline on Java stack traces and limit in its three modes, each beside an
 * empty pipeline measured in the same run; then memory: 100k streams pending in multiline, 100k
 * label values through `by_label_name`, and 1M entries held by a waiting limit (with the default
 * hold bound of MAX_HELD_ENTRIES, and unbounded to show what a held entry costs).
 */
import { Buffer } from 'node:buffer';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Registry } from 'prom-client';
import { Subject } from 'rxjs';
import { ManualClock, systemClock, type Clock } from '../core/clock.js';
import type { Entry } from '../core/entry.js';
import { processMetrics } from '../core/metrics.js';
import { buildPipeline, ingress } from '../core/pipeline.js';
import type { BuildContext, StageSpec } from '../core/stage.js';
import { holdUntilTokens } from '../operators/limit/hold-until-tokens.js';
import { limit, MAX_HELD_ENTRIES, type WaitingLimitImpl } from '../operators/limit/index.js';
import { TokenBucket } from '../operators/limit/token-bucket.js';
import { multiline } from '../operators/multiline.js';
import { calibrate, compared, faster, peakRssMiB, rate, scaled, type Timed } from './harness.js';
import type { BenchRow } from './types.js';

/** Target duration of one timed repeat; `rate` keeps the best of three. */
const START_NS = 1_700_000_000_000_000_000n;

v8.setFlagsFromString('--expose-gc');
/** A full collection, so retained-heap figures hold only what is still reachable. */
const gc = vm.runInNewContext('gc') as () => void;

function retainedHeapMiB(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / (1024 * 1024);
}

/** A deterministic generator so every run measures the same input. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

const FRAMES = [
  'at com.example.orders.OrderService.place(OrderService.java:142)',
  'at com.example.orders.OrderController.create(OrderController.java:57)',
  'at java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)',
  'at java.base/java.lang.reflect.Method.invoke(Method.java:580)',
  'at org.springframework.web.method.support.InvocableHandlerMethod.doInvoke(InvocableHandlerMethod.java:255)',
  'at org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:885)',
  'at jakarta.servlet.http.HttpServlet.service(HttpServlet.java:658)',
  'at org.apache.catalina.core.ApplicationFilterChain.doFilter(ApplicationFilterChain.java:140)',
  'at org.apache.tomcat.util.threads.ThreadPoolExecutor$Worker.run(ThreadPoolExecutor.java:659)',
  'at java.base/java.lang.Thread.run(Thread.java:1583)',
];

/**
 * Application logs of 8 pods: mostly one-line entries, one in four an error with a stack trace
 * (5–30 frames, sometimes a "Caused by" section). Each block stays within one pod's stream.
 */
function javaLogLines(blocks: number): Entry[] {
  const next = random(5);
  const entries: Entry[] = [];
  for (let b = 0; b < blocks; b++) {
    const labels = { job: 'orders', namespace: 'prod', pod: `orders-${b % 8}` };
    const time = `2024-01-25 14:${String(Math.floor(b / 60) % 60).padStart(2, '0')}:${String(b % 60).padStart(2, '0')}.${String(b % 1000).padStart(3, '0')}`;
    const push = (line: string) =>
      entries.push({ labels, line, timestamp: START_NS + BigInt(entries.length), structuredMetadata: [], extracted: {} });
    if (next() < 0.75) {
      push(
        `${time} INFO  [http-nio-8080-exec-${b % 16}] c.e.orders.OrderController - order ${b} accepted in ${Math.floor(next() * 90)} ms`,
      );
      continue;
    }
    push(`${time} ERROR [http-nio-8080-exec-${b % 16}] c.e.orders.OrderController - request ${b} failed`);
    push(`java.lang.IllegalStateException: inventory for sku-${b % 977} is locked by another transaction`);
    const frames = 5 + Math.floor(next() * 26);
    for (let f = 0; f < frames; f++) push(`\t${FRAMES[f % FRAMES.length]}`);
    if (next() < 0.4) {
      push('Caused by: java.sql.SQLTransactionRollbackException: Deadlock found when trying to get lock');
      for (let f = 0; f < 4; f++) push(`\t${FRAMES[(f + 3) % FRAMES.length]}`);
      push('\t... 42 common frames omitted');
    }
  }
  return entries;
}

let sink = 0;

/**
 * entries/s of `push` and of `baseline` over the inputs (cycled), measured in alternation so a
 * busy machine slows both alike; each figure is the best of three.
 */
function measurePair(
  inputs: readonly Entry[],
  push: (entry: Entry) => void,
  baseline: (entry: Entry) => void,
): [value: Timed, baseline: Timed] {
  const stepOf = (fn: (entry: Entry) => void) => (i: number) => fn(ingress(inputs[i % inputs.length]!));
  const [step, baseStep] = [stepOf(push), stepOf(baseline)];
  calibrate(step); // warm-up, so the first measurement of the run is not the JIT's
  calibrate(baseStep);
  const [count, baseCount] = [calibrate(step), calibrate(baseStep)];
  let best: Timed = { cpu: 0, wall: 0 };
  let baseBest: Timed = { cpu: 0, wall: 0 };
  for (let r = 0; r < 3; r++) {
    best = faster(
      best,
      rate(
        count,
        () => {
          for (let i = 0; i < count; i++) step(i);
        },
        1,
      ),
    );
    baseBest = faster(
      baseBest,
      rate(
        baseCount,
        () => {
          for (let i = 0; i < baseCount; i++) baseStep(i);
        },
        1,
      ),
    );
  }
  return [best, baseBest];
}

/**
 * A pipeline run through RxJS as a component runs it; returns the push function. Throughput runs
 * use the real clock, so a limit refills as it would in production.
 */
function through(specs: readonly StageSpec[], clock: Clock = systemClock()): (entry: Entry) => void {
  const built = buildPipeline(specs, { clock, registry: new Registry() });
  const input = new Subject<Entry>();
  built.operator(input).subscribe((e) => (sink += e.line.length));
  return (e) => input.next(e);
}

/** The fused per-entry function of a pipeline that has no operator stage. */
function perEntry(specs: readonly StageSpec[], clock: Clock = systemClock()): (entry: Entry) => void {
  const process = buildPipeline(specs, { clock, registry: new Registry() }).process!;
  return (e) => {
    const out = process(e);
    if (out) sink += out.line.length;
  };
}

function rows(name: string, meanBytes: number, value: Timed, baselineName: string, baseline: Timed): BenchRow[] {
  const mib = (perSecond: Timed) => scaled(perSecond, meanBytes / (1024 * 1024));
  return [
    compared(name, value, 'entries/s', baselineName, baseline),
    compared(`${name} (throughput)`, mib(value), 'MiB/s', baselineName, mib(baseline)),
  ];
}

const meanLineBytes = (entries: readonly Entry[]) => entries.reduce((sum, e) => sum + Buffer.byteLength(e.line), 0) / entries.length;

/** A distinct, flat ~120-byte line per index, as a reader would produce. */
function uniqueLine(i: number): string {
  return [
    'ts=2024-01-25T14:00:00Z',
    'level=info',
    `request_id=${(i * 2654435761) >>> 0}`,
    'msg="order accepted"',
    `path=/api/v1/orders/${i}`,
    'status=200 duration=12ms',
  ].join(' ');
}

export async function benchTimeStages(): Promise<BenchRow[]> {
  const out: BenchRow[] = [];

  // Throughput: multiline on Java logs.
  const java = javaLogLines(4_000);
  const javaBytes = meanLineBytes(java);
  // On a manual clock no block goes idle: each is flushed by its stream's next start line.
  const javaFirstline = '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}';
  const [multilineRate, emptyRx] = measurePair(
    java,
    through([multiline({ firstline: javaFirstline }).spec], new ManualClock(START_NS)),
    through([]),
  );
  out.push(...rows('stage.multiline (Java stack traces, 8 streams)', javaBytes, multilineRate, 'empty pipeline (RxJS)', emptyRx));

  // Throughput: limit never hitting its limit, so the figure is the stage's own cost.
  const services = Array.from(
    { length: 4_096 },
    (_, i): Entry => ({
      labels: { job: 'services', app: `app-${i % 1000}`, namespace: 'prod' },
      line: uniqueLine(i),
      timestamp: START_NS + BigInt(i),
      structuredMetadata: [],
      extracted: {},
    }),
  );
  const serviceBytes = meanLineBytes(services);
  const limitRows = (name: string, stage: (entry: Entry) => void, baseline: (entry: Entry) => void, baselineName: string) => {
    const [value, base] = measurePair(services, stage, baseline);
    out.push(...rows(name, serviceBytes, value, baselineName, base));
  };
  limitRows('stage.limit drop = true', perEntry([limit({ rate: 1e12, burst: 1000, drop: true }).spec]), perEntry([]), 'bare pipeline');
  limitRows(
    'stage.limit by_label_name (1000 values)',
    perEntry([limit({ rate: 1e12, burst: 1000, drop: true, by_label_name: 'app' }).spec]),
    perEntry([]),
    'bare pipeline',
  );
  limitRows(
    'stage.limit drop = false (under the rate)',
    through([limit({ rate: 1e12, burst: 1000 }).spec]),
    through([]),
    'empty pipeline (RxJS)',
  );

  // Memory: 100k streams each holding a 3-line block, then all gone idle.
  {
    const clock = new ManualClock(START_NS);
    const before = retainedHeapMiB();
    const push = through([multiline({ firstline: '^START', max_wait_time: 3_000_000_000n }).spec], clock);
    const streams = 100_000;
    const start = process.hrtime.bigint();
    for (let i = 0; i < streams; i++) {
      const labels = { job: 'batch', pod: `worker-${i}` };
      push(ingress({ labels, line: `START job ${i}`, timestamp: START_NS, structuredMetadata: [], extracted: {} }));
      push(ingress({ labels, line: uniqueLine(i), timestamp: START_NS, structuredMetadata: [], extracted: {} }));
      push(
        ingress({
          labels,
          line: '\tat com.example.Worker.run(Worker.java:42)',
          timestamp: START_NS,
          structuredMetadata: [],
          extracted: {},
        }),
      );
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    out.push({ name: 'stage.multiline 100k streams: lines in', value: (3 * streams) / seconds, unit: 'entries/s' });
    out.push({ name: 'stage.multiline 100k streams pending: retained heap', value: retainedHeapMiB() - before, unit: 'MiB' });
    out.push({ name: 'stage.multiline 100k streams pending: timers', value: clock.pendingTimers(), unit: 'timers' });
    clock.advanceBy(3_000);
    out.push({ name: 'stage.multiline 100k streams after max_wait_time: retained heap', value: retainedHeapMiB() - before, unit: 'MiB' });
    out.push({ name: 'peak RSS after multiline 100k streams', value: peakRssMiB(), unit: 'MiB' });
  }

  // Memory: 100k label values through by_label_name (buckets kept: at most 2 × max_distinct_labels).
  for (const maxDistinct of [10_000, 100_000]) {
    const before = retainedHeapMiB();
    const push = perEntry(
      [limit({ rate: 10, burst: 10, drop: true, by_label_name: 'tenant', max_distinct_labels: maxDistinct }).spec],
      new ManualClock(START_NS),
    );
    const values = 100_000;
    const start = process.hrtime.bigint();
    for (let i = 0; i < values; i++)
      push(ingress({ labels: { tenant: `tenant-${i}` }, line: 'x', timestamp: START_NS, structuredMetadata: [], extracted: {} }));
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    out.push({
      name: `stage.limit by_label_name 100k values, max_distinct_labels ${maxDistinct}`,
      value: values / seconds,
      unit: 'entries/s',
    });
    out.push({
      name: `stage.limit by_label_name 100k values, max_distinct_labels ${maxDistinct}: retained heap`,
      value: retainedHeapMiB() - before,
      unit: 'MiB',
    });
  }
  out.push({ name: 'peak RSS after by_label_name 100k values', value: peakRssMiB(), unit: 'MiB' });

  // Memory: 1M entries pushed into a waiting limit (rate 1/s), with the stage's bound and unbounded.
  const million = 1_000_000;
  const heldEntry = (i: number): Entry =>
    ingress({
      labels: { job: 'services', app: `app-${i % 50}` },
      line: uniqueLine(i),
      timestamp: START_NS + BigInt(i),
      structuredMetadata: [],
      extracted: {},
    });
  {
    const clock = new ManualClock(START_NS);
    const registry = new Registry();
    const before = retainedHeapMiB();
    const ctx: BuildContext = {
      clock,
      metrics: processMetrics(registry),
      random: Math.random,
      buildNested: () => buildPipeline([]),
      debug: () => {},
    };
    // Built directly (not through a pipeline) to read how many entries it holds.
    const stage = limit.definition.build(
      { rate: 1, burst: 1, drop: false, by_label_name: '', max_distinct_labels: 10_000 },
      ctx,
    ) as unknown as WaitingLimitImpl;
    const input = new Subject<Entry>();
    const sub = stage.operator(input).subscribe((e) => (sink += e.line.length));
    const start = process.hrtime.bigint();
    for (let i = 0; i < million; i++) input.next(heldEntry(i));
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    out.push({ name: `stage.limit drop = false, 1M entries in, bound ${MAX_HELD_ENTRIES}`, value: million / seconds, unit: 'entries/s' });
    out.push({ name: `stage.limit drop = false, 1M entries in: held`, value: stage.heldCount(), unit: 'entries' });
    out.push({ name: `stage.limit drop = false, 1M entries in: retained heap`, value: retainedHeapMiB() - before, unit: 'MiB' });
    sub.unsubscribe();
    out.push({ name: 'peak RSS after 1M entries into a bounded waiting limit', value: peakRssMiB(), unit: 'MiB' });
  }
  {
    const clock = new ManualClock(START_NS);
    const before = retainedHeapMiB();
    const held = holdUntilTokens(new TokenBucket(1, 1), clock, { maxHeld: million, onQueueFull: () => {}, onDiscard: () => {} });
    const input = new Subject<Entry>();
    const sub = held.operator(input).subscribe((e) => (sink += e.line.length));
    const start = process.hrtime.bigint();
    for (let i = 0; i < million; i++) input.next(heldEntry(i));
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const heap = retainedHeapMiB() - before;
    out.push({ name: 'waiting limit, 1M entries held (no bound)', value: million / seconds, unit: 'entries/s' });
    out.push({ name: 'waiting limit, 1M entries held: retained heap', value: heap, unit: 'MiB' });
    out.push({ name: 'waiting limit: retained heap per held entry', value: (heap * 1024 * 1024) / held.heldCount(), unit: 'bytes' });
    sub.unsubscribe();
    out.push({ name: 'peak RSS after 1M entries held', value: peakRssMiB(), unit: 'MiB' });
  }

  if (sink === 0) throw new Error('no output');
  return out;
}
