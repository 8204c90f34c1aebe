import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { labelsKey, type Entry } from '../../core/entry.js';
import { writeMmdb } from '../../playground/samples/mmdb-writer.js';
import { stageDefinitions } from '../../core/stage.js';
import {
  ansiLine,
  criLine,
  doesNotTouch,
  dockerLine,
  entryStream,
  idempotent,
  jsonLine,
  labelSet,
  logfmtLine,
  neverAddsEntries,
  outputWithinBounds,
  plainText,
  preservesOrder,
  type EntryField,
} from '../../testing/index.js';
import * as stages from '../../operators/index.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-invariants-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const geoDb = join(dir, 'city.mmdb');
writeFileSync(
  geoDb,
  writeMmdb([{ network: '192.0.2.0/24', data: { city: { names: { en: 'London' } } } }], {
    ipVersion: 4,
    recordSize: 24,
    databaseType: 'GeoIP2-City',
  }),
);

/** Every field but the ones a stage may change. */
const allBut = (...changed: EntryField[]): EntryField[] =>
  (['labels', 'line', 'timestamp', 'structuredMetadata', 'extracted'] as const).filter((f) => !changed.includes(f));

const linesOf = (line: fc.Arbitrary<string>) => entryStream({ line });
/** Streams whose labels use a few known names, so label stages find what they look for. */
const labelled = entryStream({
  streams: fc.array(labelSet({ names: fc.constantFrom('app', 'env', 'level', 'pod') }), { minLength: 1, maxLength: 3 }),
});
const withMetadata = entryStream({
  structuredMetadata: fc.uniqueArray(fc.record({ name: fc.constantFrom('trace_id', 'app', 'span'), value: plainText }), {
    selector: (p) => p.name,
    maxLength: 3,
  }),
});

/** Each stage's invariants, expressed with the testing kit. */
const INVARIANTS: Record<string, Record<string, () => void>> = {
  cri: {
    'merges partial lines but never adds entries, in stream order': () => {
      neverAddsEntries(stages.cri, {}, { inputs: linesOf(criLine()) });
      // stdout and stderr of one container are separate streams to cri: `<time> <stream> …`.
      const streamOf = (input: Entry) => `${labelsKey(input.labels)} ${input.line.split(' ')[1]}`;
      preservesOrder(stages.cri, { max_partial_lines: 2 }, { inputs: linesOf(criLine()), streamOf });
    },
    'never touches structured metadata': () => doesNotTouch(stages.cri, {}, ['structuredMetadata'], { inputs: linesOf(criLine()) }),
  },
  decolorize: {
    'only shortens the line': () => {
      doesNotTouch(stages.decolorize, {}, allBut('line'), { inputs: linesOf(ansiLine()) });
      outputWithinBounds(stages.decolorize, {}, (out, input) => out.line.length <= input!.line.length, { inputs: linesOf(ansiLine()) });
    },
    'is idempotent': () => idempotent(stages.decolorize, {}, { inputs: linesOf(ansiLine()) }),
  },
  docker: {
    'never adds entries and never touches structured metadata': () => {
      neverAddsEntries(stages.docker, {}, { inputs: linesOf(dockerLine()) });
      doesNotTouch(stages.docker, {}, ['structuredMetadata'], { inputs: linesOf(dockerLine()) });
    },
  },
  drop: {
    'drops some entries, keeps the others unchanged and in order': () => {
      const configs = fc.constantFrom<Record<string, unknown>>(
        { expression: 'error|^a' },
        { longer_than: '40B' },
        { source: 'app' },
        { older_than: '1h' },
      );
      neverAddsEntries(stages.drop, configs, { inputs: labelled });
      preservesOrder(stages.drop, configs, { inputs: labelled });
      doesNotTouch(stages.drop, configs, allBut(), { inputs: labelled });
    },
  },
  eventlogmessage: {
    'only writes extracted values': () =>
      doesNotTouch(stages.eventLogMessage, {}, allBut('extracted'), {
        inputs: entryStream({ extracted: fc.record({ message: fc.constantFrom('Key: value\r\nOther: 2', 'no fields', 'A:1') }) }),
      }),
  },
  geoip: {
    'only writes extracted values': () =>
      doesNotTouch(stages.geoip, { db: geoDb, source: 'ip', db_type: 'city' }, allBut('extracted'), {
        inputs: entryStream({ extracted: fc.record({ ip: fc.oneof(fc.constant('192.0.2.1'), fc.ipV4(), fc.string()) }) }),
      }),
  },
  hostevent: {
    'only writes extracted values': () =>
      doesNotTouch(stages.hostEvent, {}, allBut('extracted'), {
        inputs: entryStream({ extracted: fc.record({ message: fc.constantFrom('Key: value\r\nOther: 2', 'no fields', 'A:1') }) }),
      }),
  },
  json: {
    'only writes extracted values, the same ones on a second run': () => {
      const config = { expressions: { level: '', msg: '', user: 'user.name' } };
      doesNotTouch(stages.json, config, allBut('extracted'), { inputs: linesOf(jsonLine()) });
      idempotent(stages.json, config, { inputs: linesOf(jsonLine()) });
    },
    'drops malformed lines but never adds entries': () =>
      neverAddsEntries(stages.json, { expressions: { level: '' }, drop_malformed: true }),
  },
  label_drop: {
    'removes the listed labels and nothing else': () => {
      doesNotTouch(stages.labelDrop, { values: ['app', 'env'] }, allBut('labels'), { inputs: labelled });
      outputWithinBounds(stages.labelDrop, { values: ['app', 'env'] }, (out) => !('app' in out.labels) && !('env' in out.labels), {
        inputs: labelled,
      });
    },
    'is idempotent': () => idempotent(stages.labelDrop, { values: ['app'] }, { inputs: labelled }),
  },
  label_keep: {
    'keeps only the listed labels and touches nothing else': () => {
      doesNotTouch(stages.labelKeep, { values: ['app'] }, allBut('labels'), { inputs: labelled });
      outputWithinBounds(stages.labelKeep, { values: ['app'] }, (out) => Object.keys(out.labels).every((name) => name === 'app'), {
        inputs: labelled,
      });
    },
    'is idempotent': () => idempotent(stages.labelKeep, { values: ['app', 'pod'] }, { inputs: labelled }),
  },
  labels: {
    'only writes labels, the same ones on a second run': () => {
      doesNotTouch(stages.labels, { values: { level: '', app: 'env' } }, allBut('labels'), { inputs: labelled });
      idempotent(stages.labels, { values: { level: '' } }, { inputs: labelled });
    },
  },
  logfmt: {
    'only writes extracted values, the same ones on a second run': () => {
      doesNotTouch(stages.logfmt, { mapping: { level: '', message: 'msg' } }, allBut('extracted'), { inputs: linesOf(logfmtLine()) });
      idempotent(stages.logfmt, { mapping: { level: '' } }, { inputs: linesOf(logfmtLine()) });
    },
  },
  luhn: {
    'only rewrites the line, and a second run finds nothing more': () => {
      const cards = linesOf(
        fc.tuple(plainText, fc.constantFrom('4242424242424242', '6011111111111117', '1234567812345678'), plainText).map((p) => p.join(' ')),
      );
      doesNotTouch(stages.luhn, {}, allBut('line'), { inputs: cards });
      idempotent(stages.luhn, {}, { inputs: cards });
    },
  },
  match: {
    'never adds entries and keeps streams in order': () => {
      const configs = fc.constantFrom<Record<string, unknown>>(
        { selector: '{app="api"}', stages: [stages.staticLabels({ values: { matched: 'yes' } })] },
        { selector: '{app=~".+"} |= "error"', action: 'drop' },
      );
      const inputs = entryStream({ streams: fc.constant([{ app: 'api' }, { app: 'web' }, {}]) });
      neverAddsEntries(stages.match, configs, { inputs });
      preservesOrder(stages.match, configs, { inputs });
    },
  },
  metrics: {
    // Compliance checks that it loses none: it counts no drops, so every entry must come out.
    'never changes or adds entries': () => {
      const config = 'stage.metrics {\n  metric.counter {\n    name = "lines"\n    action = "inc"\n    match_all = true\n  }\n}';
      doesNotTouch(stages.metrics, config, allBut(), { inputs: labelled });
      neverAddsEntries(stages.metrics, config, { inputs: labelled });
    },
  },
  output: {
    'only writes the line': () => doesNotTouch(stages.output, { source: 'app' }, allBut('line'), { inputs: labelled }),
  },
  pack: {
    'writes JSON holding the old line under _entry': () =>
      outputWithinBounds(stages.pack, { labels: ['app'] }, (out, input) => JSON.parse(out.line)._entry === input!.line, {
        inputs: labelled,
      }),
  },
  pattern: {
    'only writes extracted values, the same ones on a second run': () => {
      doesNotTouch(stages.pattern, { pattern: '<level> <_>' }, allBut('extracted'));
      idempotent(stages.pattern, { pattern: '<first> <_>', labels_from_groups: true });
    },
  },
  regex: {
    'only writes extracted values (and labels when asked), the same on a second run': () => {
      doesNotTouch(stages.regex, { expression: '(?P<level>\\w+)' }, allBut('extracted'));
      doesNotTouch(stages.regex, { expression: '^(?P<first>\\S+)', labels_from_groups: true }, allBut('extracted', 'labels'));
      idempotent(stages.regex, { expression: '^(?P<first>\\S+)', labels_from_groups: true });
    },
  },
  replace: {
    'only rewrites the line, and a second run finds nothing more': () => {
      doesNotTouch(stages.replace, { expression: '(\\d+)', replace: '***' }, allBut('line', 'extracted'));
      idempotent(stages.replace, { expression: '(\\d+)', replace: '***' });
    },
  },
  sampling: {
    'drops some entries, keeps the others unchanged and in order': () => {
      neverAddsEntries(stages.sampling, { rate: 0.5 });
      preservesOrder(stages.sampling, { rate: 0.5 });
      doesNotTouch(stages.sampling, { rate: 0.5 }, allBut());
    },
  },
  static_labels: {
    'sets its labels and touches nothing else': () => {
      doesNotTouch(stages.staticLabels, { values: { env: 'prod' } }, allBut('labels'), { inputs: labelled });
      outputWithinBounds(stages.staticLabels, { values: { env: 'prod' } }, (out) => out.labels.env === 'prod', { inputs: labelled });
    },
    'is idempotent': () => idempotent(stages.staticLabels, { values: { env: 'prod' } }, { inputs: labelled }),
  },
  structured_metadata: {
    'only moves labels and extracted values into structured metadata, the same on a second run': () => {
      // A label promoted to structured metadata leaves the label set.
      doesNotTouch(stages.structuredMetadata, { values: { app: '' } }, allBut('structuredMetadata', 'labels'), { inputs: labelled });
      idempotent(stages.structuredMetadata, { regex: '^a' }, { inputs: labelled });
    },
  },
  structured_metadata_drop: {
    'removes the listed pairs and nothing else': () => {
      doesNotTouch(stages.structuredMetadataDrop, { values: ['trace_id'] }, allBut('structuredMetadata'), { inputs: withMetadata });
      outputWithinBounds(
        stages.structuredMetadataDrop,
        { values: ['trace_id'] },
        (out) => out.structuredMetadata.every((p) => p.name !== 'trace_id'),
        { inputs: withMetadata },
      );
      idempotent(stages.structuredMetadataDrop, { values: ['trace_id'] }, { inputs: withMetadata });
    },
  },
  template: {
    'only writes extracted values': () =>
      doesNotTouch(stages.template, { source: 'app', template: '{{ .Value | ToUpper }}' }, allBut('extracted'), { inputs: labelled }),
  },
  tenant: {
    'only sets the tenant label, the same on a second run': () => {
      doesNotTouch(stages.tenant, { value: 'team-a' }, allBut('labels'), { inputs: labelled });
      idempotent(stages.tenant, { label: 'app' }, { inputs: labelled });
    },
  },
  timestamp: {
    'only sets the timestamp': () =>
      doesNotTouch(stages.timestamp, { source: 'ts', format: 'RFC3339' }, allBut('timestamp'), {
        inputs: entryStream({ extracted: fc.record({ ts: fc.constantFrom('2024-01-02T03:04:05Z', 'x') }) }),
      }),
  },
  truncate: {
    'keeps lines within the limit, suffix included, and is idempotent': () => {
      const config = { rule: [{ limit: '12B', suffix: '…' }] };
      outputWithinBounds(
        stages.truncate,
        config,
        (out) => Buffer.byteLength(out.line) <= 12 || `line of ${Buffer.byteLength(out.line)} bytes`,
      );
      idempotent(stages.truncate, config);
    },
  },
  // Another engineer is still finishing these two: they run last.
  limit: {
    'never adds entries, changes none and keeps their order': () => {
      const configs = fc.constantFrom<Record<string, unknown>>({ rate: 2, burst: 2, drop: true }, { rate: 5, burst: 1 });
      neverAddsEntries(stages.limit, configs);
      preservesOrder(stages.limit, configs);
      doesNotTouch(stages.limit, configs, allBut());
    },
  },
  multiline: {
    'merges lines into blocks of at most max_lines, in stream order': () => {
      const config = { firstline: '^[A-Z]', max_lines: 3, max_wait_time: '1s' };
      const lines = entryStream({ line: fc.stringMatching(/^[A-Za-z ]{1,8}$/) });
      neverAddsEntries(stages.multiline, config, { inputs: lines });
      preservesOrder(stages.multiline, config, { inputs: lines });
      outputWithinBounds(stages.multiline, config, (out) => out.line.split('\n').length <= 3, { inputs: lines });
    },
  },
};

describe('stage invariants', () => {
  it('are expressed for every registered stage', () => {
    expect(Object.keys(INVARIANTS).sort()).toEqual(stageDefinitions().map((d) => d.name));
  });

  for (const [name, checks] of Object.entries(INVARIANTS)) {
    describe(`stage.${name}`, () => {
      for (const [sentence, check] of Object.entries(checks)) it(sentence, check);
    });
  }
});
