import { describe, expect, it } from 'vitest';
import { render, renderError } from '../render.js';

describe('urlParse and urlJoin', () => {
  it('splits a URL into its parts', () => {
    expect(render('{{ urlParse "https://user:pw@example.com:8080/p/a%20th?q=1&r=2#frag" }}')).toBe(
      'map[fragment:frag host:example.com:8080 hostname:example.com opaque: path:/p/a th query:q=1&r=2 scheme:https userinfo:user:pw]',
    );
    expect(
      render(
        '{{ (urlParse "mailto:joe@example.com").opaque }}|{{ (urlParse "/rel/path").path }}|{{ (urlParse "http://[::1]:80/").hostname }}',
      ),
    ).toBe('joe@example.com|/rel/path|::1');
  });

  it('joins parts back into a URL with Go escaping', () => {
    expect(render('{{ urlJoin (dict "scheme" "http" "host" "x.org" "path" "/a b?" "query" "q=1" "fragment" "f g") }}')).toBe(
      'http://x.org/a%20b%3F?q=1#f%20g',
    );
    expect(render('{{ urlJoin (dict "scheme" "https" "host" "h" "userinfo" "u:p@ss") }}')).toBe('https://u:p%40ss@h');
    expect(render('{{ urlParse "https://a.b/c?d#e" | urlJoin }}')).toBe('https://a.b/c?d#e');
  });

  it('fails on unparsable URLs and non-string parts', () => {
    expect(renderError('{{ urlParse "http://x:port/" }}')).toContain(
      'error calling urlParse: unable to parse url: parse "http://x:port/": invalid port ":port" after host',
    );
    expect(renderError('{{ urlJoin (dict "host" 1) }}')).toContain('unable to parse host key, must be of type string, but int found');
  });
});
