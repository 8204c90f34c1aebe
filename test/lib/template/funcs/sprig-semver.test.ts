import { describe, expect, it } from 'vitest';
import { render, renderError } from '../render.js';

describe('semver', () => {
  it('parses loose versions and exposes their parts', () => {
    expect(
      render(
        '{{ semver "v1.2" }}|{{ (semver "1.2.3-beta.1+b5").Prerelease }}|{{ (semver "1.2.3+b5").Metadata }}|{{ (semver "v2").Original }}',
      ),
    ).toBe('1.2.0|beta.1|b5|v2');
    expect(render('{{ $v := semver "1.2.3" }}{{ $v.Major }}.{{ $v.Minor }}.{{ $v.Patch }} {{ printf "%T" $v.Major }}')).toBe(
      '1.2.3 uint64',
    );
    expect(render('{{ (semver "1.2.3").Compare (semver "1.10.0") }} {{ (semver "1.0.0").LessThan (semver "1.0.0-rc1") }}')).toBe(
      '-1 false',
    );
  });

  it('rejects invalid versions', () => {
    expect(renderError('{{ semver "1.2.3.4" }}')).toContain('error calling semver: invalid semantic version');
    expect(renderError('{{ semver "1.0.0-01" }}')).toContain('error calling semver: version segment starts with 0');
  });
});

describe('semverCompare', () => {
  it.each([
    ['^1.2.0', '1.4.5', true],
    ['^1.2.0', '2.0.0', false],
    ['^0.2.3', '0.2.9', true],
    ['^0.2.3', '0.3.0', false],
    ['^0.0.3', '0.0.4', false],
    ['~1.2.3', '1.2.9', true],
    ['~1.2.3', '1.3.0', false],
    ['~1', '1.9.0', true],
    ['>=1.0, <2.0', '1.5.0', true],
    ['>=1.0 <2.0', '2.0.0', false],
    ['1.2 - 1.4', '1.4.9', true],
    ['1.2 - 1.4', '1.5.0', false],
    ['1.x', '1.7.2', true],
    ['!=1.2.x', '1.2.7', false],
    ['>1.2', '1.2.9', false],
    ['>1.2', '1.3.0', true],
    ['<=1.2', '1.2.9', true],
    ['<1.2.0 || >=2.0.0', '2.1.0', true],
    ['*', '1.0.0-alpha', false],
    ['>=1.0.0-0', '1.0.0-alpha', true],
    ['=1.2.3', '1.2.3+build', true],
  ])('checks %j against %s as %s', (constraint, version, want) => {
    expect(render('{{ semverCompare .c .v }}', { c: constraint, v: version })).toBe(String(want));
  });

  it('reports improper constraints', () => {
    expect(renderError('{{ semverCompare "> =1" "1.0.0" }}')).toContain('error calling semverCompare: improper constraint: > =1');
  });
});
