/**
 * A logs.process that registers series of its own (a stage.metrics counter and stage.drop's dropped lines), for
 * tests of how those series are labelled and shown, and a sink to forward it to that keeps nothing.
 */
import type { Entry } from '../../core/entry.js';
import type { LogsReceiver } from '../../core/receiver.js';
import { defineComponent, healthy } from '../../core/runtime/component.js';
import { t } from '../../lib/config/schema.js';
import { makeCapsule } from '../../lib/config/evaluate.js';

/**
 * Stages counting every line in `logs_process_custom_lines` and dropping lines containing "noise" with reason
 * "noise" (counted in `logs_process_dropped_lines_total`); a bare stage list, two spaces in.
 */
export const COUNT_AND_DROP_NOISE = `  stage.metrics {
    metric.counter {
      name      = "lines"
      match_all = true
      action    = "inc"
    }
  }
  stage.drop {
    expression          = "noise"
    drop_counter_reason = "noise"
  }
`;

/** A `logs.process "<label>"` block of {@link COUNT_AND_DROP_NOISE} whose forward_to is the expression `forwardTo`. */
export const meteredProcess = (label: string, forwardTo: string): string =>
  `logs.process "${label}" {\n${COUNT_AND_DROP_NOISE}  forward_to = ${forwardTo}\n}\n`;

/** An entry labelled app="a" at 1 ns, which the counter of {@link COUNT_AND_DROP_NOISE} counts under app="a". */
export const appEntry = (line: string): Entry => ({ labels: { app: 'a' }, line, timestamp: 1n, structuredMetadata: [], extracted: {} });

/** Defines the component `test.discard`: a sink whose `receiver` takes entries and forgets them. */
export function defineDiscardSink(): void {
  defineComponent({
    name: 'test.discard',
    doc: 'Takes entries and forgets them.',
    exportNames: ['receiver'],
    fields: { unused: { kind: t.string, default: '', doc: 'Nothing.' } },
    build: () => ({
      exports: { receiver: makeCapsule('logs.receiver', { send: async () => {} } satisfies LogsReceiver) },
      health: () => healthy(),
      update: () => {},
      stop: async () => {},
    }),
  });
}
