/**
 * stage.truncate — shortens the line, label values, structured-metadata values or extracted
 * strings to a byte limit, appending `suffix` to what it cut. Reference quirks kept: sizes are
 * UTF-8 bytes and the suffix eats into the limit; rules run in order; "all sources" includes
 * reserved labels and only string extracted values; every cut value counts once in
 * `logs_process_truncated_fields_total{field}`, except that a label or extracted name listed
 * twice in `sources` is walked twice and, with a suffix, counted twice; after each rule, once
 * anything was cut in this stage, extracted `truncated` holds the sorted, comma-joined set of
 * field kinds cut so far merged with the kinds already listed in an existing string `truncated`
 * (split on commas as is, so chained stages accumulate).
 *
 * One deliberate difference: the reference cuts at a byte offset even inside a multi-byte
 * character and forwards the resulting invalid UTF-8. A JS string cannot hold half a character,
 * so the cut backs off to the last whole character: the kept text is the longest prefix of whole
 * characters that fits, which is never longer than the reference's and never over the limit.
 */
import { Buffer } from 'node:buffer';
import { ByteSizeError, parseBase2Bytes } from '../lib/go/bytesize.js';
import type { Entry } from '../core/entry.js';
import { ConfigError, FieldError } from '../lib/config/errors.js';
import { defineStage, type BuildContext, type StageImpl } from '../core/stage.js';
import { names, ALL_NAMES, NO_NAMES, type NameSet } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';

export type TruncateSourceType = 'line' | 'label' | 'structured_metadata' | 'extracted';

export interface TruncateRuleConfig {
  /** A base-2 size such as `1KiB`; must be above zero. */
  readonly limit: string;
  readonly suffix: string;
  readonly source_type: TruncateSourceType;
  /** Names of the labels, metadata or extracted keys to truncate; empty means all. */
  readonly sources: readonly string[];
}

export interface TruncateConfig {
  readonly rule: readonly TruncateRuleConfig[];
}

const SOURCE_TYPES: readonly TruncateSourceType[] = ['line', 'label', 'structured_metadata', 'extracted'];
const TRUNCATED_KEY = 'truncated';

export const truncate = defineStage<TruncateConfig>({
  name: 'truncate',
  doc: 'Truncates the line, labels, structured metadata or extracted strings to a byte limit.',
  example: `stage.truncate {
  rule {
    limit  = "4KiB"
    suffix = "..."
  }

  rule {
    limit       = "256B"
    source_type = "label"
    sources     = ["pod"]
  }
}`,
  fields: {},
  blocks: {
    rule: {
      doc: 'One truncation rule; rules run in order.',
      multiple: true,
      required: true,
      fields: {
        limit: { kind: t.string, required: true, doc: 'Maximum size in bytes, with a unit: `100B`, `1KiB`, `2MB`.' },
        suffix: { kind: t.string, default: '', doc: 'Appended to truncated values; counts towards the limit.' },
        source_type: { kind: t.string, default: 'line', doc: 'What to truncate: `line`, `label`, `structured_metadata` or `extracted`.' },
        sources: { kind: t.list(t.string), default: [], doc: 'Names to truncate (not for `line`); empty means all.' },
      },
    },
  },
  validate: validateTruncate,
  build: buildTruncate,
  partitioning: (config) => ({ writes: truncatedLabels(config), state: { by: 'none' } }),
});

function validateTruncate(config: TruncateConfig): void {
  if (config.rule.length === 0) throw new ConfigError('at least one truncate rule must be specified');
  config.rule.forEach(effectiveLimit);
}

/**
 * Validates one rule and returns its limit minus the suffix's byte length. The reference checks
 * each rule block on its own and names no rule number; the error is placed at the rule's attribute.
 */
function effectiveLimit(rule: TruncateRuleConfig, index: number): number {
  const fail = (field: keyof TruncateRuleConfig, reason: string): never => {
    throw new FieldError(field, reason, { nested: [{ block: 'rule', index }] });
  };
  if (!SOURCE_TYPES.includes(rule.source_type)) fail('source_type', `unknown source_type: ${rule.source_type}`);
  let limit = 0n;
  try {
    limit = parseBase2Bytes(rule.limit);
  } catch (err) {
    if (err instanceof ByteSizeError) fail('limit', `invalid limit: ${err.message}`);
    throw err;
  }
  if (limit <= 0n) fail('limit', 'limit must be greater than zero');
  if (rule.source_type === 'line' && rule.sources.length > 0) fail('sources', "sources cannot be set when source_type is 'line'");
  const suffixBytes = BigInt(Buffer.byteLength(rule.suffix, 'utf8'));
  if (suffixBytes >= limit) fail('suffix', 'suffix length cannot be greater than or equal to limit');
  // Limits beyond 2^53 bytes cannot be reached by a JS string anyway.
  return Number(limit - suffixBytes);
}

/** Field kinds in their sorted order, which is the order `truncated` lists them in. */
const FIELD_KINDS: readonly TruncateSourceType[] = ['extracted', 'label', 'line', 'structured_metadata'];

/** The sorted, comma-joined kinds for every set of kinds, indexed by bit mask. */
const KIND_LISTS: readonly string[] = Array.from({ length: 1 << FIELD_KINDS.length }, (_, mask) =>
  FIELD_KINDS.filter((_kind, bit) => mask & (1 << bit)).join(','),
);

/** A compiled rule: its field kind (index into FIELD_KINDS) and a function returning how many values it cut. */
interface Rule {
  readonly kind: number;
  readonly apply: (entry: Entry) => number;
}

/** The labels a truncate config may shorten: those its label rules name, or every label for a rule naming none. */
function truncatedLabels(config: TruncateConfig): NameSet {
  const rules = config.rule.filter((rule) => rule.source_type === 'label');
  if (rules.some((rule) => rule.sources.length === 0)) return ALL_NAMES;
  return rules.length === 0 ? NO_NAMES : names(rules.flatMap((rule) => rule.sources));
}

function buildTruncate(config: TruncateConfig, ctx: BuildContext): StageImpl {
  const rules = config.rule.map((rule, i) => compileRule(rule, effectiveLimit(rule, i)));
  const counter = ctx.metrics.truncatedFields;
  // Cuts per field kind for the entry being processed, added to the counter once per entry.
  const counts = FIELD_KINDS.map(() => 0);
  return {
    kind: 'map',
    process: (entry) => {
      counts.fill(0);
      let mask = 0;
      // What this stage last wrote to `truncated`, and the kinds listed there before it did.
      let written: string | undefined;
      let inherited: readonly string[] = [];
      for (const rule of rules) {
        const cuts = rule.apply(entry);
        // The reference rewrites the key after every rule once anything was cut; after a rule
        // that cut nothing the rewrite changes nothing (the merge is idempotent), so it is skipped.
        if (cuts === 0) continue;
        counts[rule.kind]! += cuts;
        mask |= 1 << rule.kind;
        const existing = entry.extracted[TRUNCATED_KEY];
        if (written === undefined || existing !== written) inherited = typeof existing === 'string' ? existing.split(',') : [];
        written = inherited.length === 0 ? KIND_LISTS[mask]! : mergeKinds(inherited, mask);
        entry.extracted[TRUNCATED_KEY] = written;
      }
      for (let kind = 0; kind < counts.length; kind++) if (counts[kind]! > 0) counter.inc({ field: FIELD_KINDS[kind]! }, counts[kind]);
      return entry;
    },
  };
}

function compileRule(rule: TruncateRuleConfig, limit: number): Rule {
  const { suffix } = rule;
  const shorten = (value: string): string | undefined => (exceeds(value, limit) ? cutToBytes(value, limit) + suffix : undefined);
  const names = rule.sources.length > 0 ? new Set(rule.sources) : undefined;
  // The reference walks a label or extracted `sources` list as written: a name listed again meets
  // the value it has just cut, which is cut again to the same text and counted again whenever the
  // suffix made it longer than the effective limit.
  const listed = timesListed(rule.sources);
  const cutsOf = (name: string): number => (suffix === '' ? 1 : (listed.get(name) ?? 1));
  const kind = FIELD_KINDS.indexOf(rule.source_type);
  switch (rule.source_type) {
    case 'line':
      return {
        kind,
        apply: (entry) => {
          const line = shorten(entry.line);
          if (line === undefined) return 0;
          entry.line = line;
          return 1;
        },
      };
    case 'label':
      return {
        kind,
        apply: (entry) => {
          const { labels } = entry;
          let cuts = 0;
          for (const name of names ?? Object.keys(labels)) {
            const value = Object.hasOwn(labels, name) ? shorten(labels[name]!) : undefined;
            if (value === undefined) continue;
            labels[name] = value;
            cuts += cutsOf(name);
          }
          return cuts;
        },
      };
    case 'structured_metadata':
      return {
        kind,
        apply: (entry) => {
          let cuts = 0;
          for (const pair of entry.structuredMetadata) {
            if (names && !names.has(pair.name)) continue;
            const value = shorten(pair.value);
            if (value === undefined) continue;
            pair.value = value;
            cuts++;
          }
          return cuts;
        },
      };
    case 'extracted':
      return {
        kind,
        apply: (entry) => {
          const { extracted } = entry;
          let cuts = 0;
          for (const key of names ?? Object.keys(extracted)) {
            const current = Object.hasOwn(extracted, key) ? extracted[key] : undefined;
            if (typeof current !== 'string') continue;
            const value = shorten(current);
            if (value === undefined) continue;
            extracted[key] = value;
            cuts += cutsOf(key);
          }
          return cuts;
        },
      };
  }
}

/** How many times each name is listed. */
function timesListed(names: readonly string[]): Map<string, number> {
  const times = new Map<string, number>();
  for (const name of names) times.set(name, (times.get(name) ?? 0) + 1);
  return times;
}

/** Whether the UTF-8 encoding of `value` is longer than `limit` bytes. */
function exceeds(value: string, limit: number): boolean {
  // A UTF-16 unit encodes to 1–3 bytes, which settles most values without counting.
  if (value.length * 3 <= limit) return false;
  if (value.length > limit) return true;
  return Buffer.byteLength(value, 'utf8') > limit;
}

/**
 * The longest prefix of whole characters whose UTF-8 encoding fits in `limit` bytes (a lone
 * surrogate counts as the 3 bytes of U+FFFD, as it is encoded on output).
 */
function cutToBytes(value: string, limit: number): string {
  let bytes = 0;
  let i = 0;
  while (i < value.length) {
    const unit = value.charCodeAt(i);
    let width = 1;
    let size: number;
    if (unit < 0x80) size = 1;
    else if (unit < 0x800) size = 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length && isLowSurrogate(value.charCodeAt(i + 1))) {
      size = 4;
      width = 2;
    } else size = 3;
    if (bytes + size > limit) break;
    bytes += size;
    i += width;
  }
  return value.slice(0, i);
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** The kinds listed in an earlier `truncated` value merged with the kinds in `mask`, sorted and joined. */
function mergeKinds(inherited: readonly string[], mask: number): string {
  const merged = new Set<string>(inherited);
  FIELD_KINDS.forEach((kind, bit) => {
    if (mask & (1 << bit)) merged.add(kind);
  });
  return [...merged].sort(compareBytes).join(',');
}

const SURROGATE_OR_ABOVE = /[\uD800-\uFFFF]/;

/**
 * Go's string ordering (bytewise UTF-8). It matches UTF-16 code-unit order except around
 * surrogates, so only strings holding those need the byte comparison.
 */
function compareBytes(a: string, b: string): number {
  if (SURROGATE_OR_ABOVE.test(a) || SURROGATE_OR_ABOVE.test(b)) return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  return a < b ? -1 : a > b ? 1 : 0;
}
