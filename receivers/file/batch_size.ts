/**
 * How many lines the next batch of a file holds, so a batch is taken over within `targetMs`: the
 * lag between lines written out downstream and the offset a positions sync can save. Batches
 * double while they are taken over in time; a slow one shrinks the next to the lines taken over in
 * `targetMs` at the pace seen. But when a smaller batch took about as long as the larger one before
 * it, the time is the receivers' own latency, not the lines: smaller batches would only cut
 * throughput, so batches go back to the largest size until one is taken over in time.
 */
export class BatchSize {
  private size: number;
  private latencyBound = false;
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
    if (tookMs <= this.targetMs) {
      this.latencyBound = false;
      this.size = Math.min(this.maxLines, 2 * this.size);
      return;
    }
    // Halfway between "took time in proportion to its lines" and "took as long as the larger one".
    if (previous && lines < previous.lines && tookMs > (previous.tookMs * (lines / previous.lines + 1)) / 2) this.latencyBound = true;
    if (this.latencyBound) {
      this.size = this.maxLines;
      return;
    }
    const paced = Math.floor((lines * this.targetMs) / tookMs);
    this.size = Math.max(1, Math.min(Math.floor(this.size / 2), paced));
  }
}
