/** Every built-in sink component; importing this module registers them. */
import { registersComponents } from '../core/runtime/component-registrars.js';
export { logsEchoComponent } from './logs-echo.js';
export { profilesEchoComponent } from './profiles-echo.js';
export { profilesWriteComponent } from './profiles-write.js';
export { logsWriteComponent } from './logs-write.js';
export { logsWriteJetStreamComponent } from './logs-write-jetstream.js';
export {
  lokiWrite,
  type LokiWriteOptions,
  type LokiEndpointOptions,
  type LokiWalOptions,
  type LokiWriteSink,
  type LogsWriteTestHooks,
} from './logs-write.js';
export { echo, type EchoOptions } from './logs-echo.js';
export { jetStreamWrite, type JetStreamWrite, type JetStreamWriteOptions } from './logs-write-jetstream.js';
export {
  profilesWrite,
  type ProfilesWriteOptions,
  type ProfilesWriteEndpoint,
  type ProfilesWriteSink,
} from './profiles-write.js';
export { profilesEcho, type ProfilesEchoOptions } from './profiles-echo.js';
export type { ProfilesSink } from '../core/profile-delivery.js';

// A shard thread imports this module to know the same sinks (see core/shards).
registersComponents(import.meta.url);
