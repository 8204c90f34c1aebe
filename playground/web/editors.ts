import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { EditorSelection, Prec, type Extension } from '@codemirror/state';
import { EditorView, keymap } from '@codemirror/view';
import { basicSetup } from 'codemirror';
import type { ConfigProblem, InputProblem } from '../api.js';
import { configCompletion } from './completion.js';
import { offsetOf, wordAt } from './context.js';
import type { HelpIndex } from './help.js';
import { configHover } from './hover.js';
import { blockHighlight, blockSyntax } from './language.js';

export interface EditorOptions {
  readonly parent: HTMLElement;
  readonly label: string;
  readonly onChange: () => void;
  readonly onRun: () => void;
}

function common(options: EditorOptions): Extension[] {
  return [
    basicSetup,
    lintGutter(),
    // Above the default keymap, where Mod-Enter inserts a blank line.
    Prec.highest(keymap.of([{ key: 'Mod-Enter', run: () => (options.onRun(), true) }])),
    EditorView.contentAttributes.of({ 'aria-label': options.label }),
    EditorView.updateListener.of((update) => {
      if (update.docChanged) options.onChange();
    }),
  ];
}

/** The config editor: block-syntax highlighting, registry completion and hover, error markers. */
export function configEditor(options: EditorOptions, help: () => HelpIndex | undefined): EditorView {
  return new EditorView({
    parent: options.parent,
    extensions: [
      ...common(options),
      EditorView.lineWrapping,
      blockSyntax,
      blockSyntax.data.of({ autocomplete: configCompletion(help) }),
      blockHighlight,
      configHover(help),
    ],
  });
}

/** The input editor: plain text, with markers on lines that are not valid entries. */
export function inputEditor(options: EditorOptions): EditorView {
  return new EditorView({ parent: options.parent, extensions: [...common(options), EditorView.lineWrapping] });
}

export function setText(view: EditorView, text: string): void {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
}

/** Marks config errors at their `line:col`, over the name or token that starts there. */
export function markConfigProblems(view: EditorView, problems: readonly ConfigProblem[]): void {
  const text = view.state.doc.toString();
  const diagnostics: Diagnostic[] = problems.map((p) => {
    const from = p.line > 0 ? offsetOf(text, p.line, p.col) : 0;
    const word = wordAt(text, from);
    const to = word && word.from === from ? word.to : Math.min(from + 1, view.state.doc.lineAt(from).to);
    return {
      from,
      to: Math.max(to, from),
      severity: 'error',
      message: p.line > 0 ? `${p.line}:${p.col}: ${p.message}` : p.message,
      source: 'config',
    };
  });
  view.dispatch(setDiagnostics(view.state, diagnostics));
}

/** Marks input lines that could not be read as entries. */
export function markInputProblems(view: EditorView, problems: readonly InputProblem[]): void {
  const doc = view.state.doc;
  const diagnostics: Diagnostic[] = problems
    .filter((p) => p.line >= 1 && p.line <= doc.lines)
    .map((p) => {
      const line = doc.line(p.line);
      return { from: line.from, to: line.to, severity: 'error', message: `line ${p.line}: ${p.message}`, source: 'input' };
    });
  view.dispatch(setDiagnostics(view.state, diagnostics));
}

/** Puts the cursor at a 1-based line and column, scrolls there and focuses the editor. */
export function goTo(view: EditorView, line: number, col: number): void {
  const text = view.state.doc.toString();
  const pos = offsetOf(text, Math.max(1, line), Math.max(1, col));
  view.dispatch({ selection: EditorSelection.cursor(pos), effects: EditorView.scrollIntoView(pos, { y: 'center' }) });
  view.focus();
}
