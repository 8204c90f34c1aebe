import { describe, expect, it } from 'vitest';
import { hostLookups } from '../../../../lib/template/funcs/sprig-os.js';
import { render } from '../render.js';

describe('sprig environment functions', () => {
  it('reads and expands environment variables', () => {
    process.env['TEMPLATE_TEST_VAR'] = 'v';
    expect(render('{{ env "TEMPLATE_TEST_VAR" }}|{{ env "TEMPLATE_TEST_UNSET" }}')).toBe('v|');
    expect(render('{{ expandenv "$TEMPLATE_TEST_VAR-${TEMPLATE_TEST_VAR}-$$-${}x-$" }}')).toBe('v-v--x-$');
  });
});

describe('sprig path functions', () => {
  it.each([
    ['{{ base "/a/b.txt" }} {{ base "/a/" }} {{ base "" }} {{ base "/" }}', 'b.txt a . /'],
    ['{{ dir "/a/b.txt" }} {{ dir "a" }} {{ dir "/" }}', '/a . /'],
    ['{{ clean "a//b/../c/." }} {{ clean "/../x" }} {{ clean "../../y" }} {{ clean "" }}', 'a/c /x ../../y .'],
    ['{{ ext "a.tar.gz" }} {{ ext "a/b" }} {{ isAbs "/x" }} {{ isAbs "x" }}', '.gz  true false'],
    ['{{ osBase "/a/b" }} {{ osDir "/a/b" }} {{ osClean "a/./b" }} {{ osExt "x.y" }} {{ osIsAbs "/" }}', 'b /a a/b .y true'],
  ])('renders %j as %j', (template, want) => {
    expect(render(template)).toBe(want);
  });
});

describe('getHostByName', () => {
  it('returns IP literals as they are', () => {
    expect(render('{{ getHostByName "10.1.2.3" }}')).toBe('10.1.2.3');
  });

  it('renders a name as the empty string until the background lookup settles, then as its address', async () => {
    expect(render('[{{ getHostByName "localhost" }}]')).toBe('[]');
    await hostLookups.settled();
    expect(render('{{ getHostByName "localhost" }}')).toMatch(/^(127\.0\.0\.1|::1)$/);
  });
});
