/** Every built-in source component; importing this module registers them. */
import { registersComponents } from '../core/runtime/component-registrars.js';
export { logsSourceFileComponent } from './logs-source-file.js';
export { logsSourceStdinComponent } from './logs-source-stdin.js';
export { profilesReceiveHttpComponent } from './profiles-receive-http.js';
export { logsSourceApiComponent } from './logs-source-api.js';
export { logsSourceJetStreamComponent } from './logs-source-jetstream.js';
export { tailFiles, type FileTail, type TailFilesOptions } from './logs-source-file.js';
export { stdinLines, type LineSource, type StdinLinesOptions, type StdinRunOptions } from './logs-source-stdin.js';
export { lokiPushReceiver, type LokiPushOptions, type LokiPushReceiver } from './loki/push-receiver.js';
export { metricsMiddleware } from '../core/metrics-endpoint.js';
export { jetStreamSource, type JetStreamSource, type JetStreamSourceOptions } from './logs-source-jetstream.js';
export {
  profilesReceiver,
  type ProfilesReceiverOptions,
  type ProfilesSource,
  type ReconfigurableProfilesSource,
} from './profiles-receive-http.js';
export type { ProfileDelivery, ProfileDeliveryValue } from '../core/profile-delivery.js';

// A shard thread imports this module to know the same sources (see core/shards).
registersComponents(import.meta.url);
