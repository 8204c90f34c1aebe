/**
 * Just enough of a logs pipeline to check the template engine against the stage conformance
 * vectors of `stage.template` and `stage.replace`: a reader for the vectors' stage blocks and
 * the json/template/replace/labels/output behaviour those vectors exercise (reference §3.8,
 * §3.13). The real stages live elsewhere; this only exists to drive templates the same way.
 */
import { compileRegex, type Regex } from '../../../lib/regex/index.js';
import { parseTemplate, referenceFuncs, type Template } from '../../../lib/template/index.js';
import { formatFloat } from '../../../lib/go/strconv.js';
import { unquoteGoString } from '../../../lib/go/gostring.js';

type Value = string | Record<string, string>;
export interface Block {
  readonly name: string;
  readonly attrs: Record<string, Value>;
}

const TOKEN = /\s+|\/\/[^\n]*|"(?:\\.|[^"\\])*"|`[^`]*`|[A-Za-z_][A-Za-z0-9_.]*|[{}=,]/gy;

/** Reads `stage.x { attr = "v", map = { k = "v" } }` blocks. */
export function parseBlocks(config: string): Block[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < config.length) {
    const m = TOKEN.exec(config);
    if (m === null) throw new Error(`cannot read config at ${TOKEN.lastIndex}: ${config.slice(TOKEN.lastIndex, TOKEN.lastIndex + 20)}`);
    if (!/^\s|^\/\//.test(m[0])) tokens.push(m[0]);
  }
  let i = 0;
  const str = (t: string): string => (t.startsWith('`') ? t.slice(1, -1) : unquoteGoString(t));
  const value = (): Value => {
    const t = tokens[i++]!;
    if (t !== '{') return str(t);
    const map: Record<string, string> = {};
    while (tokens[i] !== '}') {
      const key = tokens[i++]!;
      i++; // =
      map[key.startsWith('"') ? str(key) : key] = str(tokens[i++]!);
      if (tokens[i] === ',') i++;
    }
    i++;
    return map;
  };
  const blocks: Block[] = [];
  while (i < tokens.length) {
    const name = tokens[i++]!;
    i++; // {
    const attrs: Record<string, Value> = {};
    while (tokens[i] !== '}') {
      const key = tokens[i++]!;
      i++; // =
      attrs[key] = value();
    }
    i++;
    blocks.push({ name, attrs });
  }
  return blocks;
}

/** Reference §2.1: the text of an extracted value, or undefined when not convertible. */
export function stringify(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return formatFloat(v, 'f', -1);
  return undefined;
}

function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

export interface Entry {
  labels: Record<string, string>;
  line: string;
  extracted: Record<string, unknown>;
}

type Stage = (e: Entry) => void;

function templateData(extracted: Record<string, unknown>): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(extracted)) {
    const s = stringify(v);
    if (s !== undefined) data[k] = s;
  }
  return data;
}

function templateStage(source: string, template: Template): Stage {
  return (e) => {
    const data = templateData(e.extracted);
    if (Object.hasOwn(e.extracted, source)) {
      const s = stringify(e.extracted[source]);
      if (s !== undefined) data['Value'] = s;
    }
    data['Entry'] = e.line;
    let rendered: string;
    try {
      rendered = template.execute(data);
    } catch {
      return;
    }
    if (rendered === '') delete e.extracted[source];
    else e.extracted[source] = rendered;
  };
}

function replaceStage(re: Regex, source: string, template: Template): Stage {
  return (e) => {
    let input: string | undefined = e.line;
    if (source !== '') {
      if (!Object.hasOwn(e.extracted, source)) return;
      input = stringify(e.extracted[source]);
      if (input === undefined) return;
    }
    const matches = re.findAll(input);
    if (matches.length === 0) return;
    const data = templateData(e.extracted);
    const rendered = new Map<string, string>();
    let out = '';
    let lastEnd = 0;
    let replaced = false;
    try {
      for (const m of matches) {
        for (let g = 1; g < m.indices.length; g++) {
          const span = m.indices[g];
          if (span === undefined) continue;
          const text = input.slice(span[0], span[1]);
          data['Value'] = text;
          const value = template.execute(data);
          rendered.set(text, value);
          if (!replaced || span[0] >= lastEnd) {
            out += input.slice(lastEnd, span[0]) + value;
            lastEnd = span[1];
            replaced = true;
          }
        }
      }
    } catch {
      return;
    }
    const result = out + input.slice(lastEnd);
    if (source === '') e.line = result;
    else e.extracted[source] = result;
    const first = matches[0]!;
    re.groupNames.forEach((name, g) => {
      if (name === undefined) return;
      const text = first.groups[g];
      if (text !== undefined && rendered.has(text)) e.extracted[name] = rendered.get(text);
    });
  };
}

function jsonStage(expressions: Record<string, string>): Stage {
  return (e) => {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(e.line) as Record<string, unknown>;
    } catch {
      return;
    }
    for (const [key, expr] of Object.entries(expressions)) {
      const v = parsed[expr === '' ? key : expr];
      e.extracted[key] = v === undefined ? null : v !== null && typeof v === 'object' ? sortedJson(v) : v;
    }
  };
}

/** Builds the stages of a config; throws when the reference would reject the config. */
export function buildPipeline(config: string): Stage[] {
  return parseBlocks(config).map((block): Stage => {
    const a = block.attrs;
    switch (block.name) {
      case 'stage.template': {
        const source = a['source'];
        if (typeof source !== 'string' || source === '') throw new Error('source required');
        if (typeof a['template'] !== 'string') throw new Error('template required');
        return templateStage(source, parseTemplate(a['template'], { name: 'pipeline_template', funcs: referenceFuncs }));
      }
      case 'stage.replace': {
        if (typeof a['expression'] !== 'string' || a['expression'] === '') throw new Error('expression required');
        const re = compileRegex(a['expression']);
        const template = parseTemplate(typeof a['replace'] === 'string' ? a['replace'] : '', {
          name: 'pipeline_template',
          funcs: referenceFuncs,
        });
        return replaceStage(re, typeof a['source'] === 'string' ? a['source'] : '', template);
      }
      case 'stage.json':
        return jsonStage(a['expressions'] as Record<string, string>);
      case 'stage.labels':
        return (e) => {
          for (const [label, src] of Object.entries(a['values'] as Record<string, string>)) {
            const s = stringify(e.extracted[src === '' ? label : src]);
            if (s !== undefined) e.labels[label] = s;
          }
        };
      case 'stage.output':
        return (e) => {
          const s = stringify(e.extracted[a['source'] as string]);
          if (s !== undefined) e.line = s;
        };
      default:
        throw new Error(`unsupported block ${block.name}`);
    }
  });
}

/** Runs one input entry through the stages, seeding the extracted map with its labels. */
export function run(stages: Stage[], input: { labels: Record<string, string>; line: string; extracted?: Record<string, unknown> }): Entry {
  const entry: Entry = {
    labels: { ...input.labels },
    line: input.line,
    extracted: { ...(input.extracted ?? {}), ...input.labels },
  };
  for (const stage of stages) stage(entry);
  return entry;
}
