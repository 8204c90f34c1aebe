import { describe, expect, it } from 'vitest';
import { defineFunc, referenceFuncs } from '../../../../lib/template/index.js';
import { T_STRING } from '../../../../lib/template/values.js';
import { HostCache, type HostCacheOptions } from '../../../../lib/template/funcs/host-cache.js';
import { hostByName } from '../../../../lib/template/funcs/sprig-os.js';
import { render, renderError } from '../render.js';

/** A resolver whose lookups settle only when the test says so, on a clock the test moves. */
function setup(options: Partial<HostCacheOptions> = {}) {
  let nowMs = 0;
  const pending = new Map<string, (addresses: readonly string[]) => void>();
  const asked: string[] = [];
  const cache = new HostCache({
    resolve: (name) =>
      new Promise((resolve) => {
        asked.push(name);
        pending.set(name, resolve);
      }),
    now: () => nowMs,
    ...options,
  });
  const answer = async (name: string, addresses: readonly string[]) => {
    pending.get(name)!(addresses);
    pending.delete(name);
    // The cache stores the answer in a promise callback: let the pending callbacks run.
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { cache, asked, answer, advance: (ms: number) => (nowMs += ms) };
}

describe('HostCache', () => {
  it('answers nothing for a name it does not know yet and looks it up once in the background', async () => {
    const { cache, asked, answer } = setup();
    expect(cache.addresses('db')).toBeUndefined();
    expect(cache.addresses('db')).toBeUndefined();
    expect(asked).toEqual(['db']);
    await answer('db', ['10.0.0.1', '10.0.0.2']);
    expect(cache.addresses('db')).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(asked).toEqual(['db']);
  });

  it('keeps an answer for 60 s, then keeps using it while a fresh lookup runs', async () => {
    const { cache, asked, answer, advance } = setup();
    cache.addresses('db');
    await answer('db', ['10.0.0.1']);
    advance(59_999);
    expect(cache.addresses('db')).toEqual(['10.0.0.1']);
    expect(asked).toEqual(['db']);
    advance(1);
    expect(cache.addresses('db')).toEqual(['10.0.0.1']);
    expect(cache.addresses('db')).toEqual(['10.0.0.1']);
    expect(asked).toEqual(['db', 'db']);
    await answer('db', ['10.0.0.9']);
    expect(cache.addresses('db')).toEqual(['10.0.0.9']);
  });

  it('keeps a failed lookup for 5 s, a rejection like an empty answer', async () => {
    const { cache, asked, answer, advance } = setup();
    cache.addresses('gone');
    await answer('gone', []);
    expect(cache.addresses('gone')).toEqual([]);
    advance(5_000);
    expect(cache.addresses('gone')).toEqual([]);
    expect(asked).toEqual(['gone', 'gone']);

    const failing = new HostCache({ resolve: () => Promise.reject(new Error('ENOTFOUND')) });
    failing.addresses('x');
    await failing.settled();
    expect(failing.addresses('x')).toEqual([]);
    const throwing = new HostCache({
      resolve: () => {
        throw new Error('no resolver');
      },
    });
    throwing.addresses('x');
    await throwing.settled();
    expect(throwing.addresses('x')).toEqual([]);
  });

  it('keeps the most recently used names up to its size', async () => {
    const { cache, asked, answer } = setup({ maxNames: 2 });
    for (const name of ['a', 'b']) {
      cache.addresses(name);
      await answer(name, [`10.0.0.${name === 'a' ? 1 : 2}`]);
    }
    cache.addresses('a');
    cache.addresses('c');
    await answer('c', ['10.0.0.3']);
    expect(cache.addresses('a')).toEqual(['10.0.0.1']);
    expect(cache.addresses('b')).toBeUndefined();
    expect(asked).toEqual(['a', 'b', 'c', 'b']);
  });

  it('starts no more than its lookups in flight and tries the others on a later render', async () => {
    const { cache, asked, answer } = setup({ maxLookups: 2 });
    expect(['a', 'b', 'c'].map((name) => cache.addresses(name))).toEqual([undefined, undefined, undefined]);
    expect(asked).toEqual(['a', 'b']);
    await answer('a', ['10.0.0.1']);
    expect(cache.addresses('c')).toBeUndefined();
    expect(asked).toEqual(['a', 'b', 'c']);
  });
});

describe('getHostByName over the cache', () => {
  /** The reference's functions with getHostByName reading `cache`. */
  const funcsOver = (cache: HostCache) => ({
    ...referenceFuncs,
    getHostByName: defineFunc([T_STRING], (name: string) => hostByName(cache, name)),
  });

  it('renders an IP literal as it is and a name not resolved yet as the empty string, without waiting', () => {
    const { cache, asked } = setup();
    const funcs = funcsOver(cache);
    expect(render('{{ getHostByName "10.1.2.3" }}|{{ getHostByName "::1" }}', {}, funcs)).toBe('10.1.2.3|::1');
    expect(render('[{{ getHostByName "db" }}]|{{ getHostByName "db" | default "unknown" }}', {}, funcs)).toBe('[]|unknown');
    expect(asked).toEqual(['db']);
  });

  it('renders one of the addresses once the lookup has settled', async () => {
    const { cache, answer } = setup();
    const funcs = funcsOver(cache);
    render('{{ getHostByName "db" }}', {}, funcs);
    await answer('db', ['10.0.0.1', '10.0.0.2']);
    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) seen.add(render('{{ getHostByName "db" }}', {}, funcs));
    expect([...seen].sort()).toEqual(['10.0.0.1', '10.0.0.2']);
  });

  it('fails like sprig for a name that did not resolve', async () => {
    const { cache, answer } = setup();
    const funcs = funcsOver(cache);
    render('{{ getHostByName "no-such-host.invalid" }}', {}, funcs);
    await answer('no-such-host.invalid', []);
    expect(renderError('{{ getHostByName "no-such-host.invalid" }}', {}, funcs)).toBe(
      'template: tpl:1:3: executing "tpl" at <getHostByName "no-such-host.invalid">: error calling getHostByName: invalid argument to Intn',
    );
  });
});
