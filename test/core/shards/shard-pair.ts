/** Two shards' peers joined by one channel, as the main thread joins them, for the tests of what crosses between shards. */
import { MessageChannel } from 'node:worker_threads';
import type { ShardSetup } from '../../../core/shards/shard-messages.js';
import { ShardPorts } from '../../../core/shards/shard.js';

const channels: MessageChannel[] = [];

/** Closes the channels of every pair made so far (for `afterEach`), so no port keeps the test alive. */
export function closeShardPairs(): void {
  for (const channel of channels.splice(0)) {
    channel.port1.close();
    channel.port2.close();
  }
}

/** Shard 0's and shard 1's peers of a two-shard run. */
export function shardPair(): [ShardPorts, ShardPorts] {
  const channel = new MessageChannel();
  channels.push(channel);
  const setup = (index: number): ShardSetup => ({
    index,
    count: 2,
    configText: '',
    configFile: 'x.alloy',
    stageRegistrars: [],
    componentRegistrars: [],
    stageModules: [],
    linearTimeRegex: false,
    debug: false,
    peers: index === 0 ? [undefined, channel.port1] : [channel.port2, undefined],
  });
  return [new ShardPorts(setup(0)), new ShardPorts(setup(1))];
}
