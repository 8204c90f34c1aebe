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

/** The two counters, registered once per registry. */
export interface FlowCounters {
  readonly received: Counter<'component_id'>;
  readonly sent: Counter<'component_id'>;
}

/** The name of the series counting what a component's receivers took over. */
export const RECEIVED_ENTRIES = 'rivulet_component_received_entries_total';
/** The name of the series counting what a component handed to other components. */
export const SENT_ENTRIES = 'rivulet_component_sent_entries_total';

const byRegistry = new WeakMap<Registry, FlowCounters>();

/** The flow counters on `registry`, created on first use. */
export function flowCounters(registry: Registry): FlowCounters {
  let counters = byRegistry.get(registry);
  if (counters) return counters;
  counters = {
    received: new Counter({
      name: RECEIVED_ENTRIES,
      help: "Log entries a component's receivers took over from other components.",
      labelNames: ['component_id'],
      registers: [registry],
    }),
    sent: new Counter({
      name: SENT_ENTRIES,
      help: "Log entries a component handed to other components' receivers, once per receiver.",
      labelNames: ['component_id'],
      registers: [registry],
    }),
  };
  byRegistry.set(registry, counters);
  return counters;
}
