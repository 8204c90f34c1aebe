/** Every built-in sink component; importing this module registers them. */
export { logsEchoComponent } from './logs_echo.js';
export { profilesEchoComponent } from './profiles_echo.js';
export { profilesWriteComponent } from './profiles_write.js';
export { logsWriteComponent } from './logs_write.js';
export { logsWriteJetStreamComponent } from './logs_write_jetstream.js';
export {
  lokiWrite,
  type LokiWriteOptions,
  type LokiEndpointOptions,
  type LokiWalOptions,
  type LokiWriteSink,
  type LogsWriteTestHooks,
} from './logs_write.js';
export { echo, type EchoOptions } from './logs_echo.js';
export { jetStreamWrite, type JetStreamWrite, type JetStreamWriteOptions } from './logs_write_jetstream.js';
export {
  profilesWrite,
  type ProfilesWriteOptions,
  type ProfilesWriteEndpoint,
  type ProfilesWriteSink,
} from './profiles_write.js';
export { profilesEcho, type ProfilesEchoOptions } from './profiles_echo.js';
export type { ProfilesSink } from '../core/profile-delivery.js';
