// Event-loop delay as a Prometheus histogram: how late a timer set every SAMPLE_MS fires,
// which is how long any callback that became ready then (a request's data, a commit's
// answer) waited for the loop. prom-client's default nodejs_eventloop_lag_* gauges report
// percentiles since the previous scrape (reset by each scrape, the timer's own 10 ms
// included); a cumulative histogram can be read over any window by any number of scrapers,
// which the benchmark does per round (BENCHMARKS.md, event-loop delay goal).
import { Histogram, type Registry } from 'prom-client'

const SAMPLE_MS = 10

/** Bucket bounds in seconds: fine below the 10 ms goal, coarse above it. */
export const EVENT_LOOP_DELAY_BUCKETS = [0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1]

/** Starts sampling into a histogram on `registry`; the timer never keeps the process alive. */
export function eventLoopDelayHistogram (registry: Registry): Histogram {
  const histogram = new Histogram({
    name: 'contentd_event_loop_delay_seconds',
    help: `How late a timer due every ${SAMPLE_MS} ms fired: how long a ready callback waited for the event loop`,
    buckets: EVENT_LOOP_DELAY_BUCKETS,
    registers: [registry]
  })
  let due = performance.now() + SAMPLE_MS
  const sample = (): void => {
    const now = performance.now()
    // Timers run on the loop's millisecond clock: up to 1 ms early is rounding, not negative delay.
    histogram.observe(Math.max(0, now - due) / 1000)
    due = now + SAMPLE_MS
    setTimeout(sample, SAMPLE_MS).unref()
  }
  setTimeout(sample, SAMPLE_MS).unref()
  return histogram
}
