import type { Node } from 'yaml';
import {
  attribute,
  BLANK,
  listLiteral,
  nested,
  objectLiteral,
  stringLiteral,
  type ConfigBlock,
  type ConfigStatement,
} from './config-text.js';
import { get, isMap, isScalar, isSeq, itemsOf, pairsOf, scalarText, type YamlReader } from './yaml-nodes.js';

/** Promtail's default prefix of `metrics` stage names, written out with keepNames. */
export const PROMTAIL_METRICS_PREFIX = 'promtail_custom_';

/** How a Promtail field's value is written as a Rivulet attribute. */
type FieldKind = 'string' | 'number' | 'bool' | 'map' | 'list' | 'numbers';

/** Promtail field → [Rivulet attribute, kind]; the attribute is the field's name unless given. */
type Fields = Readonly<Record<string, FieldKind | readonly [string, FieldKind]>>;

/**
 * The Promtail stages whose settings are a mapping of fields, each field written as the stage's
 * attribute of the same name (Rivulet kept the reference's names, which kept Promtail's).
 */
const FIELD_STAGES: Readonly<Record<string, { readonly stage: string; readonly fields: Fields }>> = {
  json: { stage: 'json', fields: { expressions: 'map', source: 'string', drop_malformed: 'bool' } },
  logfmt: { stage: 'logfmt', fields: { mapping: 'map', source: 'string' } },
  regex: { stage: 'regex', fields: { expression: 'string', source: 'string' } },
  replace: { stage: 'replace', fields: { expression: 'string', source: 'string', replace: 'string' } },
  template: { stage: 'template', fields: { source: 'string', template: 'string' } },
  tenant: { stage: 'tenant', fields: { label: 'string', source: 'string', value: 'string' } },
  timestamp: {
    stage: 'timestamp',
    fields: { source: 'string', format: 'string', fallback_formats: 'list', location: 'string', action_on_failure: 'string' },
  },
  output: { stage: 'output', fields: { source: 'string' } },
  docker: { stage: 'docker', fields: {} },
  decolorize: { stage: 'decolorize', fields: {} },
  cri: {
    stage: 'cri',
    fields: { max_partial_lines: 'number', max_partial_line_size: 'number', max_partial_line_size_truncate: 'bool' },
  },
  multiline: { stage: 'multiline', fields: { firstline: 'string', max_lines: 'number', max_wait_time: 'string' } },
  pack: { stage: 'pack', fields: { labels: 'list', ingest_timestamp: 'bool' } },
  limit: {
    stage: 'limit',
    fields: { rate: 'number', burst: 'number', drop: 'bool', by_label_name: 'string', max_distinct_labels: 'number' },
  },
  sampling: { stage: 'sampling', fields: { rate: 'number', drop_counter_reason: 'string' } },
  drop: {
    stage: 'drop',
    fields: {
      source: 'string',
      value: 'string',
      expression: 'string',
      older_than: 'string',
      longer_than: 'string',
      drop_counter_reason: 'string',
      separator: 'string',
    },
  },
  eventlogmessage: { stage: 'eventlogmessage', fields: { source: 'string', drop_invalid_labels: 'bool', overwrite_existing: 'bool' } },
  geoip: { stage: 'geoip', fields: { db: 'string', source: 'string', db_type: 'string', custom_lookups: 'map' } },
};

/** The Promtail stages whose settings are the `values` of a Rivulet stage: a mapping or a list. */
const VALUES_STAGES: Readonly<Record<string, { readonly stage: string; readonly kind: 'map' | 'list' }>> = {
  labels: { stage: 'labels', kind: 'map' },
  static_labels: { stage: 'static_labels', kind: 'map' },
  structured_metadata: { stage: 'structured_metadata', kind: 'map' },
  labeldrop: { stage: 'label_drop', kind: 'list' },
  labelallow: { stage: 'label_keep', kind: 'list' },
};

const METRIC_FIELDS: Fields = { description: 'string', source: 'string', prefix: 'string', max_idle_duration: 'string' };
const METRIC_CONFIG_FIELDS: Readonly<Record<string, Fields>> = {
  counter: { value: 'string', action: 'string', match_all: 'bool', count_entry_bytes: 'bool' },
  gauge: { value: 'string', action: 'string' },
  histogram: { value: 'string', buckets: 'numbers' },
};

/** Options of the stage conversion. */
export interface StageConversion {
  readonly yaml: YamlReader;
  readonly keepNames: boolean;
}

/**
 * The `stage.*` blocks for a Promtail `pipeline_stages` list, in order. A stage or field that has
 * no Rivulet equivalent is left out with a warning at it: nothing is dropped silently.
 */
export function convertStages(list: Node | null | undefined, c: StageConversion): ConfigBlock[] {
  if (list !== null && list !== undefined && !isSeq(list)) {
    c.yaml.warn(list, 'pipeline_stages is not a list; no stage converted');
    return [];
  }
  const blocks: ConfigBlock[] = [];
  for (const item of itemsOf(list)) {
    const pairs = pairsOf(item);
    if (pairs.length === 0) {
      c.yaml.warn(item, 'a pipeline stage must be a mapping of one stage name to its settings; not converted');
      continue;
    }
    for (const extra of pairs.slice(1))
      c.yaml.warn(
        extra.keyNode,
        `a pipeline stage holds one stage; "${extra.key}" is a second one in the same list item and is not converted`,
      );
    const block = convertStage(pairs[0]!.key, pairs[0]!.keyNode, pairs[0]!.value, c);
    if (block) blocks.push(block);
  }
  return blocks;
}

function convertStage(name: string, keyNode: Node, settings: Node | null, c: StageConversion): ConfigBlock | undefined {
  if (name === 'match') return convertMatch(settings, c);
  if (name === 'metrics') return convertMetrics(settings, c);
  const values = VALUES_STAGES[name];
  if (values) {
    const value = values.kind === 'map' ? mapValue(settings, c.yaml, name) : listValue(settings, c.yaml, name);
    return { name: `stage.${values.stage}`, body: value === undefined ? [] : [attribute('values', value)] };
  }
  const fields = FIELD_STAGES[name];
  if (fields) return { name: `stage.${fields.stage}`, body: convertFields(settings, fields.fields, name, c.yaml) };
  c.yaml.warn(keyNode, `Promtail stage "${name}" has no Rivulet equivalent; not converted`);
  return undefined;
}

/** `match`: its settings as attributes and its `stages` as nested stage blocks. */
function convertMatch(settings: Node | null, c: StageConversion): ConfigBlock {
  const fields: Fields = { selector: 'string', action: 'string', pipeline_name: 'string', drop_counter_reason: 'string' };
  const attributes = convertFields(settings, fields, 'match', c.yaml, ['stages']);
  const stages = convertStages(get(settings, 'stages'), c);
  const body: ConfigStatement[] = [...attributes];
  for (const stage of stages) body.push(BLANK, nested(stage));
  return { name: 'stage.match', body };
}

/**
 * `metrics`: a mapping of metric name to its definition becomes one `metric.<type>` block per
 * metric, sorted by name as the reference's converter sorts them. With keepNames a metric
 * without a prefix gets Promtail's default one written out, since Rivulet's default differs.
 */
function convertMetrics(settings: Node | null, c: StageConversion): ConfigBlock {
  const body: ConfigStatement[] = [];
  const metrics = [...pairsOf(settings)].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const { key: name, keyNode, value: metric } of metrics) {
    const typeNode = get(metric, 'type');
    const type = scalarText(typeNode)?.toLowerCase();
    if (type === undefined || !Object.hasOwn(METRIC_CONFIG_FIELDS, type)) {
      c.yaml.warn(typeNode ?? keyNode, `metric "${name}" needs a type of Counter, Gauge or Histogram; not converted`);
      continue;
    }
    // An empty prefix means the default in Promtail as in Rivulet, but the defaults differ.
    const settings = convertFields(metric, METRIC_FIELDS, `metrics: ${name}`, c.yaml, ['type', 'config']).filter(
      (a) => !(c.keepNames && a.kind === 'attribute' && a.name === 'prefix' && a.value === '""'),
    );
    const attributes = [attribute('name', stringLiteral(name)), ...settings];
    if (c.keepNames && !attributes.some((a) => a.kind === 'attribute' && a.name === 'prefix'))
      attributes.push(attribute('prefix', stringLiteral(PROMTAIL_METRICS_PREFIX)));
    attributes.push(...convertFields(get(metric, 'config'), METRIC_CONFIG_FIELDS[type]!, `metrics: ${name}: config`, c.yaml));
    if (body.length > 0) body.push(BLANK);
    body.push(nested({ name: `metric.${type}`, body: attributes }));
  }
  return { name: 'stage.metrics', body };
}

/** Each known field of a settings mapping as an attribute; a warning for each other one. */
function convertFields(
  settings: Node | null | undefined,
  fields: Fields,
  stage: string,
  yaml: YamlReader,
  handled: readonly string[] = [],
): ConfigStatement[] {
  const out: ConfigStatement[] = [];
  if (settings !== null && settings !== undefined && !isMap(settings)) {
    if (scalarText(settings) !== undefined || isSeq(settings))
      yaml.warn(settings, `${stage}: expected a mapping of settings; not converted`);
    return out;
  }
  for (const { key, keyNode, value } of pairsOf(settings)) {
    if (handled.includes(key)) continue;
    const spec = fields[key];
    if (spec === undefined) {
      yaml.warn(keyNode, `${stage}: field "${key}" has no Rivulet equivalent; not converted`);
      continue;
    }
    const [name, kind] = typeof spec === 'string' ? [key, spec] : spec;
    const written = fieldValue(value, kind as FieldKind, `${stage}: ${key}`, yaml);
    if (written !== undefined) out.push(attribute(name, written));
  }
  return out;
}

function fieldValue(node: Node | null, kind: FieldKind, where: string, yaml: YamlReader): string | undefined {
  switch (kind) {
    case 'map':
      return mapValue(node, yaml, where);
    case 'list':
      return listValue(node, yaml, where);
    case 'numbers': {
      const items = itemsOf(node).map((n) => numberText(n, yaml, where));
      return items.includes(undefined) ? undefined : listLiteral(items as string[]);
    }
    case 'number':
      return node === null ? undefined : numberText(node, yaml, where);
    case 'bool': {
      const text = scalarText(node);
      if (text === undefined) return undefined;
      if (text === 'true' || text === 'false') return text;
      yaml.warn(node, `${where}: expected true or false, got ${JSON.stringify(text)}; not converted`);
      return undefined;
    }
    case 'string': {
      // Promtail's drop stage takes a list of sources; Rivulet's, as the reference's, a comma-separated string.
      if (isSeq(node))
        return stringLiteral(
          itemsOf(node)
            .map((n) => scalarText(n) ?? '')
            .join(','),
        );
      const text = scalarText(node);
      if (text === undefined && node !== null && !isScalar(node)) yaml.warn(node, `${where}: expected a single value; not converted`);
      return text === undefined ? undefined : stringLiteral(text);
    }
  }
}

function numberText(node: Node, yaml: YamlReader, where: string): string | undefined {
  const text = scalarText(node);
  if (text !== undefined && /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/.test(text)) return text;
  yaml.warn(node, `${where}: expected a number, got ${JSON.stringify(text ?? null)}; not converted`);
  return undefined;
}

/** A mapping of names to strings (an absent value: the empty string, "the same name"). */
export function mapValue(node: Node | null, yaml: YamlReader, where: string): string | undefined {
  if (node === null) return undefined;
  if (!isMap(node)) {
    yaml.warn(node, `${where}: expected a mapping; not converted`);
    return undefined;
  }
  return objectLiteral(pairsOf(node).map(({ key, value }) => [key, stringLiteral(scalarText(value) ?? '')] as const));
}

/** A list of strings; a single value is a list of one, as Promtail's decoder reads it. */
function listValue(node: Node | null, yaml: YamlReader, where: string): string | undefined {
  if (node === null) return undefined;
  if (isScalar(node)) return listLiteral([stringLiteral(scalarText(node) ?? '')]);
  if (!isSeq(node)) {
    yaml.warn(node, `${where}: expected a list; not converted`);
    return undefined;
  }
  return listLiteral(itemsOf(node).map((n) => stringLiteral(scalarText(n) ?? '')));
}
