/**
 * How many lines the next batch of a file holds, so a batch is taken over within `targetMs`: the
 * lag between lines written out downstream and the offset a positions sync can save.
 *
 * Batches double while they are taken over in time. A slow batch shrinks the next one to what the
 * receivers take over in `targetMs`, from the time per line and the fixed time per batch that two
 * batches of different sizes show. When the fixed time alone is most of `targetMs` and of the
 * batch's time (a sink that answers each batch after a round trip), smaller batches would only cut throughput, so batches
 * grow instead, and every PROBE_EVERY slow batches one of half the size checks that this still holds.
 */
const PROBE_EVERY = 16;

export class BatchSize {
  private size: number;
  private latencyBound = false;
  private slowBatches = 0;
  private previous: { lines: number; tookMs: number } | undefined;

  constructor(
    private readonly targetMs: number,
    private readonly maxLines: number,
    firstLines: number,
  ) {
    this.size = Math.min(firstLines, maxLines);
  }

  /** Lines of the next batch. */
  get lines(): number {
    return this.size;
  }

  /** A batch of `lines` took `tookMs` to be taken over. */
  taken(lines: number, tookMs: number): void {
    const previous = this.previous;
    this.previous = { lines, tookMs };
    const target = this.targetMs;
    if (tookMs <= target) {
      this.latencyBound = false;
      this.size = Math.min(this.maxLines, 2 * this.size);
      return;
    }
    if (previous && previous.lines !== lines) {
      const perLineMs = Math.max(0, (tookMs - previous.tookMs) / (lines - previous.lines));
      const fixedMs = Math.max(0, tookMs - perLineMs * lines);
      // Latency only when the fixed time is most of both the target and this batch's time.
      this.latencyBound = fixedMs >= target / 2 && fixedMs >= tookMs / 2;
      if (!this.latencyBound) {
        this.size = Math.max(1, Math.min(this.maxLines, Math.floor((target - fixedMs) / perLineMs)));
        return;
      }
    }
    if (this.latencyBound) {
      this.slowBatches++;
      this.size = this.slowBatches % PROBE_EVERY === 0 ? Math.max(1, Math.floor(this.size / 2)) : Math.min(this.maxLines, 2 * this.size);
      return;
    }
    // One slow batch and nothing to compare it with: assume its time is all per line.
    this.size = Math.max(1, Math.min(Math.floor(this.size / 2), Math.floor((lines * target) / tookMs)));
  }
}
