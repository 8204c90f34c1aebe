/** Every built-in source component; importing this module registers them. */
export { logsSourceFileComponent } from './logs_source_file';
export { logsSourceStdinComponent } from './logs_source_stdin';
export { profilesReceiveHttpComponent } from './profiles_receive_http';
export { logsSourceApiComponent } from './logs_source_api';
