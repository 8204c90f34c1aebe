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
