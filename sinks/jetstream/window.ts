/**
 * A bound on work in flight, admitted in arrival order: `acquire(n)` waits while `n` more would
 * exceed the limit, except that anything is admitted when nothing is in flight (a send larger
 * than the limit must not wait forever).
 */
export class InFlightWindow {
  private used = 0;
  private readonly waiters: { readonly n: number; readonly resolve: () => void; readonly reject: (err: Error) => void }[] = [];
  private closed: Error | undefined;

  constructor(private limit: number) {}

  get inUse(): number {
    return this.used;
  }

  acquire(n: number): Promise<void> {
    if (this.closed) return Promise.reject(this.closed);
    if (this.waiters.length === 0 && this.fits(n)) {
      this.used += n;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => this.waiters.push({ n, resolve, reject }));
  }

  release(n: number): void {
    this.used -= n;
    this.admit();
  }

  resize(limit: number): void {
    this.limit = limit;
    this.admit();
  }

  /** Rejects every waiter and every later acquire with `err`. */
  close(err: Error): void {
    this.closed = err;
    for (const waiter of this.waiters.splice(0)) waiter.reject(err);
  }

  private fits(n: number): boolean {
    return this.used === 0 || this.used + n <= this.limit;
  }

  private admit(): void {
    while (this.waiters.length > 0 && this.fits(this.waiters[0]!.n)) {
      const waiter = this.waiters.shift()!;
      this.used += waiter.n;
      waiter.resolve();
    }
  }
}
