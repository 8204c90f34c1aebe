/** Every built-in source component; importing this module registers them. */
export { logsSourceFileComponent } from './logs_source_file.js';
export { logsSourceStdinComponent } from './logs_source_stdin.js';
export { profilesReceiveHttpComponent } from './profiles_receive_http.js';
export { logsSourceApiComponent } from './logs_source_api.js';
export { logsSourceJetStreamComponent } from './logs_source_jetstream.js';
export { tailFiles, type FileTail, type TailFilesOptions } from './logs_source_file.js';
export { stdinLines, type LineSource, type StdinLinesOptions, type StdinRunOptions } from './logs_source_stdin.js';
export { lokiPushReceiver, type LokiPushOptions, type LokiPushReceiver } from './loki/push_receiver.js';
export { metricsMiddleware } from '../core/metrics_endpoint.js';
export { jetStreamSource, type JetStreamSource, type JetStreamSourceOptions } from './logs_source_jetstream.js';
export {
  profilesReceiver,
  type ProfilesReceiverOptions,
  type ProfilesSource,
  type ReconfigurableProfilesSource,
} from './profiles_receive_http.js';
export type { ProfileDelivery, ProfileDeliveryValue } from '../core/profile-delivery.js';
