import type { CheckResult, ExportResult, RunRequest, RunResult, Sample, SamplesResult, StagesResult } from '../api.js';
import { byId, h } from './dom.js';
import { configEditor, goTo, inputEditor, markConfigProblems, markInputProblems, setText } from './editors.js';
import { HelpIndex } from './help.js';
import { renderMetrics, renderOutput, renderTimeline, renderTrace, runSummary, type ViewActions } from './render.js';
import { decodeState, encodeState, matchingSample, type SharedState } from './share.js';

const AUTO_RUN_DELAY_MS = 400;

const ui = {
  sample: byId<HTMLSelectElement>('sample'),
  sampleDescription: byId('sample-description'),
  run: byId<HTMLButtonElement>('run'),
  share: byId<HTMLButtonElement>('share'),
  export: byId<HTMLButtonElement>('export'),
  autorun: byId<HTMLInputElement>('autorun'),
  status: byId('status'),
  inputFormat: byId<HTMLSelectElement>('input-format'),
  now: byId<HTMLInputElement>('now'),
  seed: byId<HTMLInputElement>('seed'),
  problems: byId('problems'),
  summary: byId('summary'),
  showDropped: byId<HTMLInputElement>('show-dropped'),
  output: byId<HTMLTableElement>('output'),
  stagesPanel: byId('panel-stages'),
  timelinePanel: byId('panel-timeline'),
  metrics: byId('metrics'),
  dialog: byId<HTMLDialogElement>('dialog'),
  dialogTitle: byId('dialog-title'),
  dialogHelp: byId('dialog-help'),
  dialogText: byId<HTMLTextAreaElement>('dialog-text'),
  dialogCopy: byId<HTMLButtonElement>('dialog-copy'),
  dialogClose: byId<HTMLButtonElement>('dialog-close'),
};

let help: HelpIndex | undefined;
let samples: readonly Sample[] = [];
/** The sample last picked from the menu; the menu shows it only while nothing differs from it. */
let pickedSample: string | undefined;
let result: RunResult | undefined;
/** The selected entry, kept across runs by its output number or input line. */
let selection: { output?: number; inputLine?: number; trace?: number } = {};
let runSeq = 0;
/** The request of the latest run, aborted when a newer run or a restored link replaces it. */
let runRequest: AbortController | undefined;
let changeTimer: ReturnType<typeof setTimeout> | undefined;
/** Set while the app itself replaces editor text, so that is not taken for a user edit. */
let applying = false;

const onChange = () => {
  if (applying) return;
  showSample();
  clearTimeout(changeTimer);
  changeTimer = setTimeout(() => void (ui.autorun.checked ? run() : check()), AUTO_RUN_DELAY_MS);
};
const config = configEditor({ parent: byId('config-editor'), label: 'Pipeline config', onChange, onRun: () => void run() }, () => help);
const input = inputEditor({ parent: byId('input-editor'), label: 'Sample input', onChange, onRun: () => void run() });

const actions: ViewActions = {
  select: (trace) => {
    select(trace);
    showTab('stages');
  },
  jumpTo: (line, col) => goTo(config, line, col),
};

async function api<T>(path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const response = await fetch(
    path,
    body === undefined ? {} : { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal },
  );
  const data = (await response.json()) as T & { error?: string };
  if (!response.ok) throw new Error(data.error ?? `${response.status} ${response.statusText}`);
  return data;
}

function currentState(): SharedState {
  const seed = ui.seed.value.trim();
  return {
    config: config.state.doc.toString(),
    input: input.state.doc.toString(),
    inputFormat: ui.inputFormat.value === 'text' ? 'text' : 'jsonl',
    now: ui.now.value.trim(),
    ...(seed !== '' && Number.isInteger(Number(seed)) ? { seed: Number(seed) } : {}),
  };
}

function applyState(state: SharedState, sampleId = ''): void {
  applying = true;
  try {
    setText(config, state.config);
    setText(input, state.input);
    ui.inputFormat.value = state.inputFormat;
    ui.now.value = state.now;
    ui.seed.value = state.seed === undefined ? '' : String(state.seed);
  } finally {
    applying = false;
  }
  pickedSample = sampleId || undefined;
  showSample();
  selection = {};
}

/**
 * The Sample menu says what the editors hold: the sample while it is unchanged (undoing every
 * edit brings it back), "Custom" once the config, input or options differ from it.
 */
function showSample(): void {
  const sample = matchingSample(currentState(), samples, pickedSample);
  ui.sample.value = sample?.id ?? '';
  const picked = samples.find((s) => s.id === pickedSample);
  ui.sampleDescription.textContent = sample
    ? sample.description
    : picked
      ? `Edited: no longer the “${picked.title}” sample. Pick a sample to start again from it.`
      : '';
}

async function run(): Promise<void> {
  clearTimeout(changeTimer);
  runRequest?.abort();
  const controller = new AbortController();
  runRequest = controller;
  const seq = ++runSeq;
  const state = currentState();
  const request: RunRequest = {
    config: state.config,
    input: state.input,
    inputFormat: state.inputFormat,
    ...(state.now ? { now: state.now } : {}),
    ...(state.seed !== undefined ? { seed: state.seed } : {}),
  };
  setStatus('Running…');
  const started = performance.now();
  let answer: RunResult;
  try {
    answer = await api<RunResult>('/api/run', request, controller.signal);
  } catch (err) {
    if (seq === runSeq) setStatus(`Run failed: ${(err as Error).message}`);
    return;
  }
  // An older run finishing late must not overwrite a newer one.
  if (seq !== runSeq) return;
  result = answer;
  markConfigProblems(config, answer.errors);
  markInputProblems(input, answer.inputErrors);
  renderProblems(answer);
  restoreSelection();
  renderAll();
  document.body.dataset.runs = String(Number(document.body.dataset.runs ?? '0') + 1);
  setStatus(
    answer.errors.length > 0
      ? `Config has ${answer.errors.length} error${answer.errors.length === 1 ? '' : 's'}`
      : `Ran in ${Math.round(performance.now() - started)} ms`,
  );
}

/** Without auto-run, edits still get live error markers. */
async function check(): Promise<void> {
  try {
    const answer = await api<CheckResult>('/api/check', { config: config.state.doc.toString() });
    markConfigProblems(config, answer.errors);
  } catch (err) {
    setStatus(`Check failed: ${(err as Error).message}`);
  }
}

function restoreSelection(): void {
  if (!result) return;
  let trace: number | undefined;
  if (selection.output !== undefined) trace = result.outputs[selection.output]?.trace;
  if (trace === undefined && selection.inputLine !== undefined)
    trace = result.traces.find((t) => t.origin.kind === 'input' && t.origin.line === selection.inputLine)?.id;
  trace ??= result.outputs[0]?.trace ?? result.traces[0]?.id;
  selection = trace === undefined ? {} : selectionOf(trace);
}

function selectionOf(trace: number): typeof selection {
  const t = result?.traces[trace];
  if (!t) return {};
  return {
    trace,
    ...(t.fate.kind === 'forwarded' ? { output: t.fate.output } : {}),
    ...(t.origin.kind === 'input' ? { inputLine: t.origin.line } : {}),
  };
}

function select(trace: number): void {
  selection = selectionOf(trace);
  renderAll();
  ui.output.querySelector<HTMLElement>(`tr[data-trace="${trace}"]`)?.focus();
}

function renderAll(): void {
  if (!result) return;
  renderOutput(ui.output, result, selection.trace, ui.showDropped.checked, actions);
  renderTrace(ui.stagesPanel, result, selection.trace, actions);
  renderTimeline(ui.timelinePanel, result, actions);
  renderMetrics(ui.metrics, result);
  ui.summary.textContent = result.errors.length > 0 ? '' : runSummary(result);
}

function renderProblems(answer: RunResult): void {
  const items = [
    ...answer.errors.map((p) => ({
      text: p.line > 0 ? `Config ${p.line}:${p.col}: ${p.message}` : `Config: ${p.message}`,
      go: () => goTo(config, p.line, p.col),
    })),
    ...answer.inputErrors.map((p) => ({ text: `Input line ${p.line}: ${p.message}`, go: () => goTo(input, p.line, 1) })),
  ];
  ui.problems.replaceChildren();
  ui.problems.hidden = items.length === 0;
  if (items.length === 0) return;
  const list = h('ul');
  for (const item of items) {
    const button = h('button', { type: 'button', class: 'link' }, item.text);
    button.addEventListener('click', item.go);
    list.append(h('li', {}, button));
  }
  ui.problems.append(h('h2', {}, 'Problems'), list);
}

function setStatus(text: string): void {
  ui.status.textContent = text;
}

const TABS = ['stages', 'timeline', 'metrics'] as const;
function showTab(name: (typeof TABS)[number], focus = false): void {
  for (const tab of TABS) {
    const button = byId(`tab-${tab}`);
    const selected = tab === name;
    button.setAttribute('aria-selected', String(selected));
    button.tabIndex = selected ? 0 : -1;
    byId(`panel-${tab}`).hidden = !selected;
    if (selected && focus) button.focus();
  }
}

function openDialog(title: string, helpText: string, text: string): void {
  ui.dialogTitle.textContent = title;
  ui.dialogHelp.textContent = helpText;
  ui.dialogText.value = text;
  ui.dialog.showModal();
  ui.dialogText.focus();
  ui.dialogText.select();
}

async function copyDialogText(): Promise<void> {
  try {
    await navigator.clipboard.writeText(ui.dialogText.value);
    setStatus('Copied to the clipboard');
  } catch {
    ui.dialogText.select();
    setStatus('Select the text and copy it with Ctrl+C');
  }
}

async function share(): Promise<void> {
  const hash = await encodeState(currentState());
  history.replaceState(null, '', hash);
  openDialog(
    'Share link',
    'This link holds the whole config, input and options (in the part after #, which is never sent to a server).',
    location.href,
  );
}

async function exportConfig(): Promise<void> {
  try {
    const answer = await api<ExportResult>('/api/export', { config: config.state.doc.toString() });
    if (answer.errors.length > 0 && answer.config === '') {
      setStatus('Fix the config errors first');
      return;
    }
    openDialog(
      'Copy as config',
      'A complete config file: the logs.process block sends to a logs.write block. Point its url (or forward_to) at your own receivers.',
      answer.config,
    );
  } catch (err) {
    setStatus(`Export failed: ${(err as Error).message}`);
  }
}

function wireControls(): void {
  ui.run.addEventListener('click', () => void run());
  ui.share.addEventListener('click', () => void share());
  ui.export.addEventListener('click', () => void exportConfig());
  ui.dialogCopy.addEventListener('click', () => void copyDialogText());
  ui.dialogClose.addEventListener('click', () => ui.dialog.close());
  ui.showDropped.addEventListener('change', renderAll);
  for (const control of [ui.inputFormat, ui.now, ui.seed]) control.addEventListener('change', onChange);
  for (const control of [ui.now, ui.seed]) control.addEventListener('input', showSample);
  ui.sample.addEventListener('change', () => {
    const sample = samples.find((s) => s.id === ui.sample.value);
    if (!sample) {
      // "Custom" is a state, not something to load: the menu goes back to saying what is shown.
      showSample();
      return;
    }
    applyState(sample, sample.id);
    history.replaceState(null, '', location.pathname);
    void run();
  });
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && !event.defaultPrevented) {
      event.preventDefault();
      void run();
    }
  });
  const tablist = document.querySelector('[role="tablist"]')!;
  for (const tab of TABS) byId(`tab-${tab}`).addEventListener('click', () => showTab(tab));
  tablist.addEventListener('keydown', (event) => {
    const key = (event as KeyboardEvent).key;
    const current = TABS.findIndex((t) => byId(`tab-${t}`).getAttribute('aria-selected') === 'true');
    const next =
      key === 'ArrowRight'
        ? (current + 1) % TABS.length
        : key === 'ArrowLeft'
          ? (current + TABS.length - 1) % TABS.length
          : key === 'Home'
            ? 0
            : key === 'End'
              ? TABS.length - 1
              : -1;
    if (next < 0) return;
    event.preventDefault();
    showTab(TABS[next]!, true);
  });
  window.addEventListener('hashchange', () => void restoreFromHash());
}

/**
 * Shows the state a share link holds, without running it: the link may come from any web page,
 * and its config is whoever wrote it. The user reads it first and runs it with Run (or by editing
 * it, with "Run on change").
 */
async function restoreFromHash(): Promise<boolean> {
  const state = await decodeState(location.hash);
  if (!state) return false;
  // Nothing started for the previous state may finish on this one.
  clearTimeout(changeTimer);
  runRequest?.abort();
  runSeq++;
  applyState(state);
  clearResults();
  setStatus('Opened from a link: read the config, then press Run');
  return true;
}

function clearResults(): void {
  result = undefined;
  markConfigProblems(config, []);
  markInputProblems(input, []);
  ui.problems.replaceChildren();
  ui.problems.hidden = true;
  ui.output.tBodies[0]?.remove();
  ui.stagesPanel.replaceChildren();
  ui.timelinePanel.replaceChildren();
  ui.metrics.replaceChildren();
  ui.summary.textContent = '';
}

async function start(): Promise<void> {
  wireControls();
  setStatus('Loading…');
  const [stagesAnswer, samplesAnswer] = await Promise.all([api<StagesResult>('/api/stages'), api<SamplesResult>('/api/samples')]);
  help = new HelpIndex(stagesAnswer.stages);
  samples = samplesAnswer.samples;
  ui.sample.replaceChildren(h('option', { value: '' }, 'Custom'), ...samples.map((s) => h('option', { value: s.id }, s.title)));
  if (!(await restoreFromHash()) && samples[0]) {
    applyState(samples[0], samples[0].id);
    await run();
  }
  document.body.dataset.ready = 'true';
}

void start().catch((err: Error) => setStatus(`Could not start: ${err.message}`));
