/**
 * Every built-in stage. Importing this module registers them all with the stage registry; each
 * export is the stage's programmatic factory (an RxJS operator builder).
 */
export { staticLabels } from './static_labels';
export { labelDrop } from './label_drop';
export { labelKeep } from './label_keep';
export { labels } from './labels';
export { structuredMetadata } from './structured_metadata';
export { structuredMetadataDrop } from './structured_metadata_drop';
export { output } from './output';
export { tenant } from './tenant';
export { regex } from './regex';
export { pattern } from './pattern';
export { hostEvent } from './hostevent';
export { eventLogMessage } from './eventlogmessage';
export { geoip } from './geoip';
export { match } from './match';
export { drop } from './drop';
export { sampling } from './sampling';
export { truncate } from './truncate';
export { metrics } from './metrics';
export { cri } from './cri';
export { docker } from './docker';
export { json } from './json';
export { logfmt } from './logfmt';
export { decolorize } from './decolorize';
export { pack } from './pack';
export { luhn } from './luhn';
export { limit } from './limit';
export { multiline } from './multiline';
export { timestamp } from './timestamp';
export { template } from './template';
export { replace } from './replace';
