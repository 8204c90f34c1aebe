/**
 * The names both JetStream components check alike: stream, group and consumer names, and the
 * subject prefix their partitions' subjects start with. Each check reports through the component's
 * `checks`, so a bad name is placed at its attribute with every other problem of the block.
 */
import type { Checks } from '../config/schema.js';

/** No dots, wildcards or spaces (NATS's rule for stream and consumer names), kept to a safe set. */
const NAME = /^[A-Za-z0-9_-]+$/;
/** Dot-separated name tokens: a subject without wildcards. */
const SUBJECT_PREFIX = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/** Reports `attribute` unless `value` may name a stream, a group or a consumer. */
export function checkName(value: string, attribute: string, checks: Checks): void {
  if (!NAME.test(value)) checks.fail(`${attribute} must be letters, digits, "_" or "-", got ${JSON.stringify(value)}`, attribute);
}

/** Reports `subject_prefix` unless `prefix` may start the partitions' subjects (`<prefix>.<partition>`). */
export function checkSubjectPrefix(prefix: string, checks: Checks): void {
  if (!SUBJECT_PREFIX.test(prefix))
    checks.fail(`subject_prefix must be dot-separated tokens without wildcards, got ${JSON.stringify(prefix)}`, 'subject_prefix');
}
