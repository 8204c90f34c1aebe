/** Every built-in sink component; importing this module registers them. */
export { logsEchoComponent } from './logs_echo';
export { profilesEchoComponent } from './profiles_echo';
export { profilesWriteComponent } from './profiles_write';
export { logsWriteComponent } from './logs_write';
