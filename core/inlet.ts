import { Observable, type Subscriber } from 'rxjs';

/**
 * The input of a built pipeline: an Observable with one subscriber, which its owner pushes
 * entries into. A Subject does the same, but its `next` allocates a closure and an iterator for
 * every value, a measurable share of a pipeline's garbage at a hundred thousand entries a second.
 * A value pushed while nobody is subscribed is dropped, as a Subject drops it.
 */
export class Inlet<T> extends Observable<T> {
  private subscriber: Subscriber<T> | undefined;
  private ended = false;

  constructor() {
    super((subscriber) => {
      if (this.subscriber !== undefined) throw new Error('an inlet takes one subscriber at a time');
      if (this.ended) {
        subscriber.complete();
        return;
      }
      this.subscriber = subscriber;
      return () => {
        if (this.subscriber === subscriber) this.subscriber = undefined;
      };
    });
  }

  next(value: T): void {
    this.subscriber?.next(value);
  }

  /** Ends the input: the subscriber completes, now or when it subscribes. */
  complete(): void {
    this.ended = true;
    this.subscriber?.complete();
  }
}
