/** Every built-in sink component; importing this module registers them. */
export { logsEchoComponent } from './logs_echo';
