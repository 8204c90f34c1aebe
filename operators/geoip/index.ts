/**
 * stage.geoip — looks up the IP address held in an extracted value in an MMDB database and adds
 * geolocation fields (`geoip_city_name`, `geoip_country_code`, `geoip_autonomous_system_number`…)
 * and JMESPath `custom_lookups` over the raw record. Reference quirks kept: the database is read
 * once when the stage is built (an unreadable file is a config error); a missing or unconvertible
 * source, or text that is not an IP under Go's grammar, leaves the entry unchanged; a lookup error
 * (IPv6 address in an IPv4 database, record of the wrong shape) skips the custom lookups too; only
 * non-empty / non-zero fields are written; custom lookup results are stored as they are (maps and
 * lists are not JSON-encoded) and may overwrite the `db_type` fields; an explicitly empty
 * `custom_lookups = {}` counts as set.
 */
import { compileJmesPath, type JmesPath } from '../../lib/jmespath.js';
import { ConfigError, FieldError } from '../../lib/config/errors.js';
import { GeoipDatabase, geoipFields, parseGoIP, type GeoipDbType } from './lookup.js';
import { assertReadable } from '../../core/sandbox.js';
import { defineStage, type BuildContext, type StageImpl } from '../../core/stage.js';
import { PER_ENTRY } from '../../core/stage-partitioning.js';
import { t } from '../../lib/config/schema.js';
import { stringify } from '../../lib/go/values.js';

export interface GeoipConfig {
  /** Path to the MMDB database file. */
  readonly db: string;
  /** Extracted name holding the IP address. */
  readonly source: string;
  /** `city`, `asn` or `country`; "" (the default) means no typed lookup. */
  readonly db_type: string;
  /** Extracted name → JMESPath expression over the record; "" means the name itself. Absent ≠ `{}`. */
  readonly custom_lookups?: Readonly<Record<string, string>>;
}

const DB_TYPES: readonly string[] = ['city', 'asn', 'country'];

export const geoip = defineStage<GeoipConfig>({
  name: 'geoip',
  doc: 'Adds geolocation fields for the IP address in an extracted value, from an MMDB database.',
  example: String.raw`stage.regex {
  expression = "^(?P<ip>\\S+) "
}

stage.geoip {
  db      = "GeoLite2-City.mmdb"
  source  = "ip"
  db_type = "city"
}`,
  fields: {
    db: { kind: t.string, required: true, doc: 'Path to the MMDB database; read once when the pipeline is built.' },
    source: { kind: t.string, required: true, doc: 'Extracted name holding the IP address.' },
    db_type: { kind: t.string, default: '', doc: 'Typed lookup: `city`, `asn` or `country`.' },
    custom_lookups: {
      kind: t.map(t.string),
      doc: 'Extracted name → JMESPath expression evaluated on the database record (empty: the name itself).',
    },
  },
  validate: validateGeoip,
  build: buildGeoip,
  partitioning: () => PER_ENTRY,
});

function validateGeoip(config: GeoipConfig): void {
  compileLookups(config);
}

/** Validates in the reference's order and compiles the custom lookups. */
function compileLookups(config: GeoipConfig): Array<[name: string, expression: JmesPath]> {
  if (config.db === '') throw new FieldError('db', 'db path cannot be empty');
  if (config.source === '') throw new FieldError('source', 'source cannot be empty');
  if (config.db_type === '' && config.custom_lookups === undefined) throw new ConfigError('db type or values need to be set');
  if (config.db_type !== '' && !DB_TYPES.includes(config.db_type)) throw new FieldError('db_type', 'db type should be either city or asn');
  const lookups: Array<[string, JmesPath]> = [];
  for (const [name, text] of Object.entries(config.custom_lookups ?? {})) {
    try {
      lookups.push([name, compileJmesPath(text === '' ? name : text)]);
    } catch {
      // Unlike stage.json, the reference drops the parser's reason here.
      throw new FieldError('custom_lookups', 'could not compile JMES expression');
    }
  }
  return lookups;
}

function buildGeoip(config: GeoipConfig, ctx: BuildContext): StageImpl {
  const lookups = compileLookups(config);
  let db: GeoipDatabase;
  try {
    assertReadable(ctx.sandbox, config.db);
    db = GeoipDatabase.open(config.db);
  } catch (err) {
    throw new FieldError('db', (err as Error).message);
  }
  const dbType = config.db_type === '' ? undefined : (config.db_type as GeoipDbType);
  const { source } = config;
  return {
    kind: 'map',
    process: (entry) => {
      const { extracted } = entry;
      if (!Object.hasOwn(extracted, source)) return entry;
      const text = stringify(extracted[source]);
      if (text === undefined) return entry;
      const ip = parseGoIP(text);
      if (ip === undefined) {
        ctx.debug('geoip: source is not an ip', { source: text });
        return entry;
      }
      let record: unknown;
      try {
        record = db.lookup(ip);
        if (dbType) Object.assign(extracted, geoipFields(record, dbType));
      } catch (err) {
        ctx.debug('geoip: lookup failed', { ip: text, error: (err as Error).message });
        return entry;
      }
      for (const [name, expression] of lookups) {
        let result: unknown;
        try {
          result = expression.search(record ?? null);
        } catch (err) {
          ctx.debug('geoip: custom lookup failed', { name, error: (err as Error).message });
          continue;
        }
        if (result !== null && result !== undefined) extracted[name] = result;
      }
      return entry;
    },
  };
}
