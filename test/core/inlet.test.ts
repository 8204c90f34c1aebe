import { map, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Inlet } from '../../core/inlet.js';

describe('Inlet', () => {
  it('hands what is pushed to its subscriber, through operators, and completes it', () => {
    const inlet = new Inlet<number>();
    const seen: number[][] = [];
    inlet
      .pipe(
        map((n) => n * 2),
        toArray(),
      )
      .subscribe((all) => seen.push(all));
    inlet.next(1);
    inlet.next(2);
    inlet.complete();
    inlet.next(3);
    expect(seen).toEqual([[2, 4]]);
  });

  it('drops values pushed while nobody is subscribed, as a Subject does', () => {
    const inlet = new Inlet<string>();
    inlet.next('early');
    const seen: string[] = [];
    const subscription = inlet.subscribe((v) => seen.push(v));
    inlet.next('a');
    subscription.unsubscribe();
    inlet.next('late');
    inlet.subscribe((v) => seen.push(`again ${v}`));
    inlet.next('b');
    expect(seen).toEqual(['a', 'again b']);
  });

  it('completes a subscriber that comes after the end at once', () => {
    const inlet = new Inlet<number>();
    inlet.complete();
    let completed = false;
    inlet.subscribe({ complete: () => (completed = true) });
    expect(completed).toBe(true);
  });

  it('refuses a second subscriber while the first is subscribed', () => {
    const inlet = new Inlet<number>();
    inlet.subscribe(() => {});
    const errors: string[] = [];
    inlet.subscribe({ error: (err: Error) => errors.push(err.message) });
    expect(errors).toEqual(['an inlet takes one subscriber at a time']);
  });
});
