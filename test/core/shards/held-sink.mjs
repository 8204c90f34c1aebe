/**
 * logs.held: a sink that takes entries over only once the HTTP server at `url` answers its request
 * (204), so a test holds pushes at the receiver, on whatever thread the sink runs, until it lets
 * them go. Named under `logs.` so that a sharded run runs it on the shards. It imports the sources
 * (not the package, which is the built copy with registries of its own), as the tests run them.
 */
import { defineComponent, healthy, logsReceiverCapsule, t } from '../../../index.ts';

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
