/**
 * Entries in and out of every logs component of a running graph, counted where the graph joins
 * components (the receiver wrappers of tap.ts) so every component type has them without counting
 * them itself: `rivulet_component_received_entries_total{component_id}` counts the entries a
 * component's exported receivers took over, `rivulet_component_sent_entries_total{component_id}`
 * the entries it handed to other components' receivers — once per receiver, so an entry a
 * component forwards to two components counts twice, as it is two deliveries. A send that fails
 * (a "retry later" included) counts nowhere: nothing was taken over.
 */
import { Counter, type Registry } from 'prom-client';
import { perRegistry } from '../metrics.js';

/** One component's running total, added to by the graph's receiver wrappers. */
export interface FlowTally {
  count: number;
}

/** One of the two counters and the components' running totals it reports. */
export interface FlowCounter {
  readonly counter: Counter<'component_id'>;
  /** `componentId`'s running total, created (and its series shown at 0) on first use. */
  tally(componentId: string): FlowTally;
}

/** The two counters, registered once per registry. */
export interface FlowCounters {
  readonly received: FlowCounter;
  readonly sent: FlowCounter;
}

/** The name of the series counting what a component's receivers took over. */
export const RECEIVED_ENTRIES = 'rivulet_component_received_entries_total';
/** The name of the series counting what a component handed to other components. */
export const SENT_ENTRIES = 'rivulet_component_sent_entries_total';

/** The flow counters on `registry`, created on first use. */
export const flowCounters: (registry: Registry) => FlowCounters = perRegistry((registry) => ({
  received: flowCounter(registry, RECEIVED_ENTRIES, "Log entries a component's receivers took over from other components."),
  sent: flowCounter(registry, SENT_ENTRIES, "Log entries a component handed to other components' receivers, once per receiver."),
}));

function flowCounter(registry: Registry, name: string, help: string): FlowCounter {
  // A send adds to a plain number; the counter takes the totals over when /metrics is read. That
  // keeps the pipeline's cost per batch to an addition rather than a labelled counter update.
  const tallies = new Map<string, { tally: FlowTally; reported: number }>();
  const counter: Counter<'component_id'> = new Counter({
    name,
    help,
    labelNames: ['component_id'],
    registers: [registry],
    collect: () => {
      for (const [id, entry] of tallies) {
        if (entry.tally.count > entry.reported) counter.inc({ component_id: id }, entry.tally.count - entry.reported);
        entry.reported = entry.tally.count;
      }
    },
  });
  return {
    counter,
    tally(componentId) {
      let entry = tallies.get(componentId);
      if (!entry) {
        entry = { tally: { count: 0 }, reported: 0 };
        tallies.set(componentId, entry);
        counter.inc({ component_id: componentId }, 0);
      }
      return entry.tally;
    },
  };
}
