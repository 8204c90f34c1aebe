/**
 * The differential oracle: Go's real `text/template` compiled to WebAssembly
 * (@evertdespiegeleer/go-template). It has no custom functions, runs with missingkey=error and
 * receives data through JSON (numbers become float64); the template is named "tpl".
 */
import { parse } from '@evertdespiegeleer/go-template';
import { parseTemplate, TemplateParseError } from '../../../lib/template/index.js';

export type OracleResult =
  | { readonly ok: true; readonly output: string }
  | { readonly ok: false; readonly kind: 'parse' | 'exec'; readonly message: string };

type Render = (template: string, json: string) => string;

let render: Render | undefined;

/** Loads the WASM module once and returns a synchronous renderer. */
export async function loadOracle(): Promise<(template: string, data: unknown) => OracleResult> {
  if (render === undefined) {
    await parse('', {});
    render = (globalThis as unknown as { Render: Render }).Render;
  }
  const r = render;
  return (template, data) => {
    const raw = r(template, JSON.stringify(data));
    if (raw.startsWith('Template exec error: ')) return { ok: false, kind: 'exec', message: raw.slice('Template exec error: '.length) };
    if (raw.startsWith('Template parse error: ')) return { ok: false, kind: 'parse', message: raw.slice('Template parse error: '.length) };
    if (raw.startsWith('JSON parse error:')) throw new Error(raw);
    return { ok: true, output: raw };
  };
}

/** Our engine with built-ins only, reported the way the oracle reports Go (template "tpl"). */
export function ours(template: string, data: unknown): OracleResult {
  try {
    return { ok: true, output: parseTemplate(template, { name: 'tpl' }).execute(data) };
  } catch (err) {
    const kind = err instanceof TemplateParseError ? 'parse' : 'exec';
    return { ok: false, kind, message: (err as Error).message };
  }
}
