import type { TokenBucket } from './token-bucket.js';

/**
 * Buckets by label value in two generations (Loki's GenerationalMap): at most `2 × maxSize`
 * values are remembered, however many distinct values go by.
 */
export class GenerationalBuckets {
  private newer = new Map<string, TokenBucket>();
  private older = new Map<string, TokenBucket>();

  constructor(
    private readonly maxSize: number,
    private readonly create: () => TokenBucket,
    private readonly onRotate: () => void,
  ) {}

  getOrCreate(value: string): TokenBucket {
    let bucket = this.newer.get(value);
    if (bucket !== undefined) return bucket;
    bucket = this.older.get(value) ?? this.create();
    this.newer.set(value, bucket);
    if (this.newer.size === this.maxSize) {
      this.older = this.newer;
      this.newer = new Map();
      this.onRotate();
    }
    return bucket;
  }
}
