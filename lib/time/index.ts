/** Go-compatible time handling over nanosecond bigint instants. */
export {
  compileLayout,
  formatLayout,
  parseLayout,
  RFC3339_LAYOUT,
  RFC3339_NANO_LAYOUT,
  TimeParseError,
  type CompiledLayout,
  type ParseLayoutOptions,
  type ParsedTime,
} from './layout.js';
export {
  compileTimestampFormat,
  parseTimestamp,
  parseTimestampWithFallbacks,
  TIMESTAMP_SHORTHANDS,
  validateLocation,
  type ParseTimestampOptions,
  type TimestampParser,
} from './formats.js';
export { formatRFC3339Nano, msToNs, nsToMs, parseRFC3339 } from './rfc3339.js';
export { loadLocation, localLocation, refreshLocalLocation, UnknownLocationError, type TimeLocation } from './location.js';
