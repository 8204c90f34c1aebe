/**
 * Every built-in stage. Importing this module registers them all with the stage registry; each
 * export is the stage's programmatic factory (an RxJS operator builder).
 */
import { registersStages } from '../core/stage-modules.js';
export { staticLabels } from './static-labels.js';
export { labelDrop } from './label-drop.js';
export { labelKeep } from './label-keep.js';
export { labels } from './labels.js';
export { structuredMetadata } from './structured-metadata.js';
export { structuredMetadataDrop } from './structured-metadata-drop.js';
export { output } from './output.js';
export { tenant } from './tenant.js';
export { regex } from './regex.js';
export { pattern } from './pattern.js';
export { hostEvent } from './hostevent.js';
export { eventLogMessage } from './eventlogmessage.js';
export { geoip } from './geoip/index.js';
export { match } from './match.js';
export { drop } from './drop.js';
export { sampling } from './sampling.js';
export { truncate } from './truncate.js';
export { metrics } from './metrics/index.js';
export { cri } from './cri.js';
export { docker } from './docker.js';
export { json } from './json.js';
export { logfmt } from './logfmt.js';
export { decolorize } from './decolorize.js';
export { pack } from './pack.js';
export { luhn } from './luhn.js';
export { limit } from './limit/index.js';
export { multiline } from './multiline.js';
export { timestamp } from './timestamp.js';
export { template } from './template.js';
export { replace } from './replace.js';

// Pipeline threads import this module too, to know the built-in stages.
registersStages(import.meta.url);
