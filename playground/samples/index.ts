import type { Sample } from '../api.js';
import { criSample } from './cri.js';
import { dockerSample } from './docker.js';
import { GEOIP_CITY_DB, sampleCityDatabase } from './geoip-database.js';
import { hostEventsSample } from './host-events.js';
import { javaMultilineSample } from './java-multiline.js';
import { kubernetesSample } from './kubernetes.js';
import { logfmtSample } from './logfmt.js';
import { luhnSample } from './luhn.js';
import { nginxGeoipSample } from './nginx-geoip.js';
import { retentionSample } from './retention.js';

/** The library as written, in menu order (configs may hold the database placeholder). */
export const SAMPLES: readonly Sample[] = [
  kubernetesSample,
  dockerSample,
  criSample,
  logfmtSample,
  nginxGeoipSample,
  javaMultilineSample,
  hostEventsSample,
  luhnSample,
  retentionSample,
];

/** The samples ready to run, and the files their configs read. */
export interface PreparedSamples {
  readonly samples: Sample[];
  /** What a sandboxed run must still be allowed to read for every sample to work. */
  readonly files: readonly string[];
}

/**
 * The library ready to run: the sample GeoIP database is written and its path put into the
 * configs that use it.
 */
export function prepareSamples(databaseDir?: string): PreparedSamples {
  const cityDb = sampleCityDatabase(databaseDir);
  return {
    samples: SAMPLES.map((s) => ({ ...s, config: s.config.split(GEOIP_CITY_DB).join(cityDb.replaceAll('\\', '\\\\')) })),
    files: [cityDb],
  };
}

/** The samples of `prepareSamples`. */
export function sampleLibrary(databaseDir?: string): Sample[] {
  return prepareSamples(databaseDir).samples;
}
