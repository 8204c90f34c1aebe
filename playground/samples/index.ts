import type { Sample } from '../api';
import { criSample } from './cri';
import { dockerSample } from './docker';
import { GEOIP_CITY_DB, sampleCityDatabase } from './geoip-database';
import { hostEventsSample } from './host-events';
import { javaMultilineSample } from './java-multiline';
import { kubernetesSample } from './kubernetes';
import { logfmtSample } from './logfmt';
import { luhnSample } from './luhn';
import { nginxGeoipSample } from './nginx-geoip';
import { retentionSample } from './retention';

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

/**
 * The library ready to run: the sample GeoIP database is written and its path put into the
 * configs that use it.
 */
export function sampleLibrary(databaseDir?: string): Sample[] {
  const cityDb = sampleCityDatabase(databaseDir);
  return SAMPLES.map((s) => ({ ...s, config: s.config.split(GEOIP_CITY_DB).join(cityDb.replaceAll('\\', '\\\\')) }));
}
