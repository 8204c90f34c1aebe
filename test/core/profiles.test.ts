import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildLabels,
  CanceledError,
  DeadlineExceededError,
  deadlineOf,
  encodeQuery,
  escapeQueryComponent,
  findError,
  firstQueryValue,
  isBuiltLabelSet,
  joinErrors,
  JoinedError,
  parseQuery,
  RemoteStatusError,
  scopedDeadline,
  WrappedError,
} from '../../core/profiles.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100);

describe('buildLabels', () => {
  it('keeps the last value of a repeated name, drops empty values and sorts by name', () => {
    expect(
      buildLabels([
        { name: 'b', value: '1' },
        { name: 'a', value: 'x' },
        { name: 'b', value: '2' },
        { name: 'c', value: 'y' },
        { name: 'c', value: '' },
      ]),
    ).toEqual([
      { name: 'a', value: 'x' },
      { name: 'b', value: '2' },
    ]);
  });

  it('yields a sorted set without repeated names or empty values for any input', () => {
    const pair = fc.record({ name: fc.constantFrom('a', 'b', 'c', '__name__', 'service_name'), value: fc.constantFrom('', 'x', 'y') });
    fc.assert(
      fc.property(fc.array(pair), (pairs) => {
        const built = buildLabels(pairs);
        const names = built.map((l) => l.name);
        expect(names).toEqual([...new Set(names)].sort());
        expect(built.every((l) => l.value !== '')).toBe(true);
        for (const { name, value } of built) expect(pairs.filter((p) => p.name === name).at(-1)!.value).toBe(value);
      }),
      { numRuns },
    );
  });

  it('returns a copy, equal to its input, for an input that is already built', () => {
    const pair = fc.record({ name: fc.string({ maxLength: 4 }), value: fc.string({ maxLength: 3 }) });
    fc.assert(
      fc.property(fc.array(pair), (pairs) => {
        const built = buildLabels(pairs);
        expect(isBuiltLabelSet(built)).toBe(true);
        const again = buildLabels(built);
        expect(again).toEqual(built);
        for (let i = 0; i < built.length; i++) expect(again[i]).not.toBe(built[i]);
      }),
      { numRuns },
    );
  });
});

describe('isBuiltLabelSet', () => {
  it('holds exactly when the names ascend strictly and no value is empty', () => {
    expect(isBuiltLabelSet([])).toBe(true);
    expect(
      isBuiltLabelSet([
        { name: 'a', value: '1' },
        { name: 'b', value: '2' },
      ]),
    ).toBe(true);
    expect(
      isBuiltLabelSet([
        { name: 'b', value: '1' },
        { name: 'a', value: '2' },
      ]),
    ).toBe(false);
    expect(
      isBuiltLabelSet([
        { name: 'a', value: '1' },
        { name: 'a', value: '2' },
      ]),
    ).toBe(false);
    expect(isBuiltLabelSet([{ name: 'a', value: '' }])).toBe(false);
  });
});

describe('query strings', () => {
  it('reads plus as a space and skips pairs with semicolons or malformed escapes', () => {
    const parsed = parseQuery('name=a+b%7Bx%3Dy%7D&bad=%zz&semi=1;2&empty&from=1&from=2');
    expect([...parsed]).toEqual([
      ['name', ['a b{x=y}']],
      ['empty', ['']],
      ['from', ['1', '2']],
    ]);
  });

  it('finds the first value of one key the same way', () => {
    expect(firstQueryValue('from=1&name=a%7Bb%3Dc%7D&name=second', 'name')).toBe('a{b=c}');
    expect(firstQueryValue('name=%zz&name=ok+go', 'name')).toBe('ok go');
    expect(firstQueryValue('from=1', 'name')).toBe('');
    expect(firstQueryValue('na%6De=%C3%BC%FF', 'name')).toBe('ü\udcff');
  });

  it('keeps the stray bytes of escapes that are not valid UTF-8 (as lone surrogates) and writes them back as they came', () => {
    expect(firstQueryValue('name=%E2%82x', 'name')).toBe('\udce2\udc82x');
    expect(firstQueryValue('name=%F0%9F%98%80%F0%9F%98', 'name')).toBe('😀\udcf0\udc9f\udc98');
    expect(firstQueryValue('name=%ED%A0%80', 'name')).toBe('\udced\udca0\udc80');
    expect(parseQuery('x=%C0%AF').get('x')).toEqual(['\udcc0\udcaf']);
    expect(encodeQuery(parseQuery('x=%C0%AF&y=%E2%82x'))).toBe('x=%C0%AF&y=%E2%82x');
  });

  it('writes keys sorted, spaces as plus and everything but unreserved characters escaped', () => {
    expect(
      encodeQuery(
        new Map([
          ['name', ['my app{env=prod}']],
          ['from', ['1']],
          ['custom', ['a/b', 'c~d']],
        ]),
      ),
    ).toBe('custom=a%2Fb&custom=c~d&from=1&name=my+app%7Benv%3Dprod%7D');
    expect(escapeQueryComponent('ü')).toBe('%C3%BC');
  });

  it('reads back what it writes', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 12 });
    fc.assert(
      fc.property(
        fc.dictionary(
          text.filter((k) => k !== ''),
          fc.array(text, { minLength: 1, maxLength: 3 }),
        ),
        (record) => {
          const values = new Map(Object.entries(record));
          const parsed = parseQuery(encodeQuery(values));
          expect(Object.fromEntries(parsed)).toEqual(Object.fromEntries([...values].sort(([a], [b]) => (a < b ? -1 : 1))));
        },
      ),
      { numRuns },
    );
  });
});

describe('error chains', () => {
  it('prints causes after their context and joins errors one per line', () => {
    const joined = joinErrors([new WrappedError('failed to ingest profile to appendable 0', new Error('error1')), new Error('error2')]);
    expect(joined?.message).toBe('failed to ingest profile to appendable 0: error1\nerror2');
    expect(joinErrors([])).toBeUndefined();
  });

  it('finds the first typed error depth first, through causes and joined lists', () => {
    const first = new RemoteStatusError(429, 'slow down');
    const second = new RemoteStatusError(400, 'bad');
    const tree = new JoinedError([new Error('plain'), new WrappedError('a', new WrappedError('b', first)), second]);
    expect(findError(tree, (e): e is RemoteStatusError => e instanceof RemoteStatusError)).toBe(first);
    expect(first.message).toBe('pyroscope write error: status=429 msg=slow down');
  });
});

describe('scopedDeadline', () => {
  it('fires with DeadlineExceededError at its deadline and records it', async () => {
    const deadline = Date.now() + 30;
    const scoped = scopedDeadline(deadline);
    expect(deadlineOf(scoped.signal)).toBe(deadline);
    await new Promise((resolve) => scoped.signal.addEventListener('abort', resolve));
    expect(scoped.signal.reason).toBeInstanceOf(DeadlineExceededError);
    expect((scoped.signal.reason as Error).message).toBe('context deadline exceeded');
  });

  it('keeps the earlier deadline of a parent and follows its abort', () => {
    const parent = scopedDeadline(Date.now() + 1_000);
    const child = scopedDeadline(Date.now() + 60_000, parent.signal);
    expect(deadlineOf(child.signal)).toBe(deadlineOf(parent.signal));
    const controller = new AbortController();
    const linked = scopedDeadline(Date.now() + 60_000, controller.signal);
    controller.abort(new CanceledError());
    expect(linked.signal.reason).toBeInstanceOf(CanceledError);
    for (const s of [parent, child, linked]) s.release();
  });

  it('is already aborted when the deadline has passed', () => {
    const scoped = scopedDeadline(Date.now() - 1);
    expect(scoped.signal.aborted).toBe(true);
    expect(scoped.signal.reason).toBeInstanceOf(DeadlineExceededError);
  });

  it('waits out a deadline years away instead of firing at once, without overflowing a timer', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const scoped = scopedDeadline(Date.UTC(2100, 0, 1));
      // Node reports an overflowing delay on the next tick and fires it after 1 ms.
      await new Promise((r) => setTimeout(r, 30));
      expect(scoped.signal.aborted).toBe(false);
      scoped.release();
      expect(warnings.map((w) => w.name)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('lets go of its timer and parent listener on release', async () => {
    const controller = new AbortController();
    const scoped = scopedDeadline(Date.now() + 20, controller.signal);
    scoped.release();
    await new Promise((r) => setTimeout(r, 40));
    controller.abort();
    expect(scoped.signal.aborted).toBe(false);
  });
});
