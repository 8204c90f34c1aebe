import { formatRFC3339Nano } from '../../lib/time/rfc3339.js';
import { dropReason } from '../drop-reason.js';
import { describeChange, entryChanges, entryParts } from './entry-diff.js';
import { labelsKey, type Entry } from '../entry.js';
import { entryToJson } from '../entry-json.js';
import type { StageList } from '../stage-list.js';
import type { EntryJson, EntryTrace, Flush, PipelineTracer, StageTrace, Trigger, TraceStep } from '../trace.js';

/**
 * Tags an entry with the trace it belongs to. A symbol key is invisible to every stage (they read
 * string keys only) and to the JSON output, yet `cloneEntry`'s spread copies it, so the tag rides
 * along through the pipeline's copies, a multiline block (which is its start line's entry) and a
 * joined CRI line (the full line's entry).
 */
const TRACE_TAG = Symbol('entry trace');

interface TraceState {
  readonly trace: EntryTrace;
  status: 'active' | 'held' | 'done';
  /** While held: the operator's step, when and in which tick it took the entry. */
  held?: { readonly step: TraceStep; readonly before: Entry; readonly tick: number; readonly seq: number; readonly key: string };
  /** Operator `stage.match` steps the entry went into and has not come out of yet. */
  readonly open: Array<{ readonly step: TraceStep; readonly before: Entry }>;
}

interface Emission {
  readonly seq: number;
  readonly trace: number;
  readonly key: string;
}

/**
 * Turns the pipeline's stage events into per-entry stories: the playground's traces and what
 * `rivulet process --inspect` prints. Execution is synchronous, so every
 * event belongs to the entry whose tag it carries; what needs care is what the events leave
 * implicit: an operator holding an entry and sending it on later (a flush), a `stage.match`
 * reporting its nested stages before itself, and entries that vanish into another (a multiline
 * block, CRI partial lines), which are matched up with that operator's next output.
 */
export class TraceRecorder implements PipelineTracer {
  private readonly states: TraceState[] = [];
  /** Tag → the trace its entry currently continues (a re-sent entry starts a new trace). */
  private readonly byTag = new Map<number, TraceState>();
  private readonly emissions = new Map<number, Emission[]>();
  private readonly flushes: Flush[] = [];
  private trigger: Trigger = { kind: 'timer' };
  private tick = 0;
  private seq = 0;
  private last: TraceState | undefined;

  constructor(
    private readonly stages: StageList,
    private readonly nowMs: () => number,
  ) {}

  /** Marks what drives the events that follow: an input, the timers, or the end of input. */
  startTick(trigger: Trigger): void {
    this.trigger = trigger;
    this.tick++;
  }

  /** Starts the trace of input `input` (from input line `line`) and tags its entry. */
  beginInput(entry: Entry, input: number, line: number): void {
    const state = this.newTrace({ kind: 'input', input, line });
    (entry.extracted as Record<symbol, unknown>)[TRACE_TAG] = state.trace.id;
    this.byTag.set(state.trace.id, state);
  }

  /** Records that `entry` left the pipeline as output number `output`; returns its trace id. */
  forwarded(entry: Entry, output: number): number {
    const state = this.stateOf(entry);
    state.trace.fate = { kind: 'forwarded', output };
    state.status = 'done';
    return state.trace.id;
  }

  stage(event: StageTrace): void {
    this.seq++;
    const stage = this.stages.indexOf(event.path);
    if (stage < 0) return;
    const { before, after } = event;
    const effects = event.effects && event.effects.length > 0 ? [...event.effects] : undefined;
    if (before && after) this.ran(stage, before, after, effects);
    else if (before) this.stopped(stage, before, effects);
    else if (after) this.emitted(stage, after);
  }

  /** The traces with every fate settled, and the flushes in time order. */
  finish(): { traces: EntryTrace[]; flushes: Flush[] } {
    for (const state of this.states) {
      if (state.status === 'done') continue;
      if (state.status === 'held' && state.held) {
        const stage = state.held.step.stage;
        const into = this.emissions
          .get(stage)
          ?.find((e) => e.seq > state.held!.seq && e.trace !== state.trace.id && e.key === state.held!.key);
        state.trace.fate = into ? { kind: 'merged', stage, into: into.trace } : { kind: 'held', stage };
        if (into) state.held.step.reason = `joined into the entry of trace ${into.trace}`;
        continue;
      }
      const lastStep = state.trace.steps[state.trace.steps.length - 1];
      state.trace.fate = { kind: 'held', stage: lastStep?.stage ?? -1 };
    }
    return { traces: this.states.map((s) => s.trace), flushes: this.flushes };
  }

  /** A per-entry stage ran and the entry came out. */
  private ran(stage: number, before: Entry, after: Entry, effects: string[] | undefined): void {
    const state = this.stateOf(before);
    this.enterIfNested(state, stage);
    const changes = changesOf(before, after);
    const step = this.step(stage, changes.length > 0 ? 'changed' : 'unchanged', before, after, changes);
    if (effects) step.effects = effects;
    if (this.stages.isMatch(stage)) this.placeMatch(state, step);
    else state.trace.steps.push(step);
  }

  /** An entry went into a stage and did not come out: dropped by a per-entry stage, held by an operator. */
  private stopped(stage: number, before: Entry, effects: string[] | undefined): void {
    const state = this.stateOf(before);
    this.enterIfNested(state, stage);
    const info = this.stages.infos[stage]!;
    if (info.kind === 'map') {
      const step = this.step(stage, 'dropped', before, null, []);
      if (effects) step.effects = effects;
      if (this.stages.isMatch(stage)) {
        this.placeMatch(state, step);
        // Dropped inside the branch: the nested stage that dropped it is the one to name.
        if (state.status === 'done') return;
      } else {
        state.trace.steps.push(step);
      }
      step.reason = dropReason(this.stages.specs[stage]!);
      state.trace.fate = { kind: 'dropped', stage, reason: step.reason };
      state.status = 'done';
      return;
    }
    const step = this.step(stage, 'held', before, null, []);
    state.trace.steps.push(step);
    state.status = 'held';
    state.held = { step, before, tick: this.tick, seq: this.seq, key: labelsKey(before.labels) };
  }

  /** An operator sent an entry on. */
  private emitted(stage: number, after: Entry): void {
    const tagged = this.taggedState(after);
    const state = tagged ?? this.last;
    const afterJson = toJson(after);
    const nowMs = this.nowMs();
    let key = labelsKey(after.labels);
    let traceId: number;
    const openIndex = state ? state.open.findIndex((o) => o.step.stage === stage) : -1;
    if (state && state.status === 'held' && state.held && state.held.step.stage === stage) {
      const { step, before, tick } = state.held;
      key = state.held.key;
      step.after = afterJson;
      step.changes = changesOf(before, after);
      step.releasedAtMs = nowMs;
      step.trigger = this.trigger;
      if (this.stages.isMatch(stage)) step.outcome = 'not-matched';
      else step.outcome = tick === this.tick ? 'passed' : 'released';
      state.status = 'active';
      state.held = undefined;
      this.last = state;
      traceId = state.trace.id;
      if (step.outcome === 'released') this.flushes.push({ stage, atMs: nowMs, trigger: this.trigger, trace: traceId, line: after.line });
    } else if (state && state.status === 'active' && openIndex >= 0) {
      // Leaving an operator match the entry went into: the match step shows the branch's net effect.
      const { step, before } = state.open[openIndex]!;
      state.open.splice(openIndex);
      step.after = afterJson;
      step.changes = changesOf(before, after);
      step.releasedAtMs = nowMs;
      this.last = state;
      traceId = state.trace.id;
    } else {
      // Sent on a second time (a block cut by max_lines, then its rest), or an untagged entry.
      const fresh = this.newTrace({ kind: 'emitted', stage, from: state?.trace.id ?? -1 });
      fresh.trace.steps.push({
        stage,
        outcome: 'released',
        before: null,
        after: afterJson,
        changes: [],
        atMs: nowMs,
        releasedAtMs: nowMs,
        trigger: this.trigger,
      });
      const tag = (after.extracted as Record<symbol, unknown>)[TRACE_TAG];
      if (typeof tag === 'number') this.byTag.set(tag, fresh);
      this.last = fresh;
      traceId = fresh.trace.id;
      this.flushes.push({ stage, atMs: nowMs, trigger: this.trigger, trace: traceId, line: after.line });
    }
    if (!this.stages.isMatch(stage)) {
      const list = this.emissions.get(stage) ?? [];
      list.push({ seq: this.seq, trace: traceId, key });
      this.emissions.set(stage, list);
    }
  }

  /** An event from inside an operator match the entry is held at means it went into the branch. */
  private enterIfNested(state: TraceState, stage: number): void {
    if (state.status !== 'held' || !state.held || !this.stages.isInside(stage, state.held.step.stage)) return;
    const { step, before } = state.held;
    step.outcome = 'matched';
    state.open.push({ step, before });
    state.status = 'active';
    state.held = undefined;
  }

  /**
   * A per-entry `stage.match` reports after its nested stages: put its step before them. It took
   * the branch exactly when nested steps were recorded for it.
   */
  private placeMatch(state: TraceState, step: TraceStep): void {
    const steps = state.trace.steps;
    let first = steps.length;
    while (first > 0 && this.stages.isInside(steps[first - 1]!.stage, step.stage)) first--;
    const matched = first < steps.length;
    if (matched) step.outcome = 'matched';
    else if (step.outcome !== 'dropped') step.outcome = 'not-matched';
    steps.splice(first, 0, step);
  }

  private step(stage: number, outcome: TraceStep['outcome'], before: Entry, after: Entry | null, changes: string[]): TraceStep {
    return { stage, outcome, before: toJson(before), after: after ? toJson(after) : null, changes, atMs: this.nowMs() };
  }

  private newTrace(origin: EntryTrace['origin']): TraceState {
    const state: TraceState = {
      trace: { id: this.states.length, origin, atMs: this.nowMs(), steps: [], fate: { kind: 'held', stage: -1 } },
      status: 'active',
      open: [],
    };
    this.states.push(state);
    this.last = state;
    return state;
  }

  private taggedState(entry: Entry): TraceState | undefined {
    const tag = (entry.extracted as Record<symbol, unknown>)[TRACE_TAG];
    return typeof tag === 'number' ? this.byTag.get(tag) : undefined;
  }

  /** The trace an entry belongs to; an untagged entry continues the most recent one. */
  private stateOf(entry: Entry): TraceState {
    const state = this.taggedState(entry) ?? this.last ?? this.newTrace({ kind: 'emitted', stage: -1, from: -1 });
    this.last = state;
    return state;
  }
}

/** What changed, as `--inspect` words it, with the timestamps in RFC 3339 as the JSON form shows them. */
function changesOf(before: Entry, after: Entry): string[] {
  return entryChanges(partsOf(before), partsOf(after)).map(describeChange);
}

function partsOf(entry: Entry) {
  return { ...entryParts(entry), timestamp: formatRFC3339Nano(entry.timestamp) };
}

/** The `rivulet process` JSON form of an entry, as an object. */
export function toJson(entry: Entry): EntryJson {
  return JSON.parse(entryToJson(entry, true)) as EntryJson;
}
