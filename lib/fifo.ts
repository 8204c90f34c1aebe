/**
 * An array-backed first-in first-out queue with O(1) amortised `push` and `shift` (an array's own
 * `shift` is O(n), which a queue of a million held entries cannot afford).
 */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The oldest item, left in place; undefined when empty. */
  peek(): T | undefined {
    return this.items[this.head];
  }

  /** Takes the oldest item; undefined when empty. */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    // Compact once the consumed prefix dominates, so memory follows what is held.
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Puts `items` back in front, in their order: they become the oldest. */
  unshiftAll(items: readonly T[]): void {
    if (items.length === 0) return;
    this.items = [...items, ...this.items.slice(this.head)];
    this.head = 0;
  }

  /** Empties the queue and returns what it held, oldest first. */
  takeAll(): T[] {
    const rest = this.items.slice(this.head) as T[];
    this.clear();
    return rest;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}
