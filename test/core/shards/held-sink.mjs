/**
 * logs.held: a sink that takes entries over only once the HTTP server at `url` answers its request
 * (204), so a test holds pushes at the receiver, on whatever thread the sink runs, until it lets
 * them go. Named under `logs.` so that a sharded run runs it on the shards. It imports the sources
 * (not the package, which is the built copy with registries of its own), as the tests run them.
 */
import { defineComponent, defineStage, healthy, logsReceiverCapsule, PER_ENTRY, t } from '../../../index.ts';

/**
 * A stage that does nothing: a sharded run hands its shards only the modules that define a stage
 * (core/stage-modules.ts, loadedStageModuleFiles), so this one defines one for its component to
 * reach them.
 */
export const heldNoop = defineStage({
  name: 'held_noop',
  doc: 'Passes every entry as it is.',
  fields: {},
  build: () => ({ kind: 'map', process: (entry) => entry }),
  partitioning: () => PER_ENTRY,
});

export const heldSink = defineComponent({
  name: 'logs.held',
  doc: 'Takes entries over once the server at url answers 204.',
  exportNames: ['receiver'],
  fields: {
    url: { kind: t.string, required: true, doc: 'Where each send waits for its answer.' },
  },
  build(args) {
    let { url } = args.values;
    const receiver = {
      async send(entries) {
        const res = await fetch(url, { method: 'POST', body: String(entries.length) });
        if (res.status !== 204) throw new Error(`the hold answered ${res.status}`);
      },
    };
    return {
      exports: { receiver: logsReceiverCapsule(receiver) },
      health: () => healthy(),
      update(next) {
        ({ url } = next.values);
      },
      async stop() {},
    };
  },
});
