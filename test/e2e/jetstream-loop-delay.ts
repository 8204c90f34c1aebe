/**
 * Loaded into a processing instance of the chaos test (`node --import`): reports the longest
 * event-loop stall of each second on stderr, as `loop_delay_max_ms=<ms>`, so the test can say how
 * long the process was held once it was running (the figure the minimum lease_ttl is set above;
 * loading the modules at start-up holds it longer, before any lease is taken).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

const histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();
setInterval(() => {
  process.stderr.write(`loop_delay_max_ms=${Math.round(histogram.max / 1e6)}\n`);
  histogram.reset();
}, 1000).unref();
