import { describe, expect, it } from 'vitest';
import { render, renderError } from '../render.js';

describe('sprig defaults', () => {
  it.each([
    [
      '{{ default "d" .missing }}|{{ .missing | default "d" }}|{{ default "d" "" }}|{{ default "d" "x" }}|{{ default "d" 0 }}|{{ default "d" (list) }}',
      'd|d|d|x|d|d',
    ],
    [
      '{{ empty 0 }} {{ empty "" }} {{ empty (list) }} {{ empty (dict) }} {{ empty nil }} {{ empty false }} {{ empty 0.0 }} {{ empty "x" }}',
      'true true true true true true true false',
    ],
    ['{{ coalesce "" .missing "c" "d" }}|{{ coalesce 0 "" }}', 'c|<no value>'],
    ['{{ all 1 "a" (list 1) }} {{ all 1 "" }} {{ any 0 "" }} {{ any 0 "x" }}', 'true false false true'],
    ['{{ ternary "y" "n" true }}|{{ false | ternary "y" "n" }}', 'y|n'],
  ])('renders %j as %j', (template, want) => {
    expect(render(template)).toBe(want);
  });

  it('wants a real bool for ternary', () => {
    expect(renderError('{{ ternary 1 2 "true" }}')).toContain('expected bool; found "true"');
  });
});

describe('sprig JSON', () => {
  it.each([
    ['{{ toJson (dict "a" (list 1 "<x>" nil true) "b" 1.5) }}', '{"a":[1,"\\u003cx\\u003e",null,true],"b":1.5}'],
    ['{{ toJson 1e21 }}|{{ toJson 1e-7 }}|{{ toJson 100.0 }}|{{ toJson "\\u2028\\b" }}', '1e+21|1e-7|100|"\\u2028\\b"'],
    ['{{ toPrettyJson (dict "a" (list 1 2) "e" (list) "m" (dict)) }}', '{\n  "a": [\n    1,\n    2\n  ],\n  "e": [],\n  "m": {}\n}'],
    ['{{ toRawJson (dict "h" "<&>") }}|{{ mustToRawJson "x" }}', '{"h":"<&>"}|"x"'],
    [
      '{{ fromJson "{\\"a\\":[1,2],\\"b\\":{\\"c\\":null}}" }}|{{ (fromJson "[1]") | printf "%T" }}',
      'map[a:[1 2] b:map[c:<nil>]]|[]interface {}',
    ],
    ['{{ fromJson "bad" }}|{{ toJson .missing }}', '<no value>|null'],
  ])('renders %j as %j', (template, want) => {
    expect(render(template)).toBe(want);
  });

  it('returns JSON errors from the must forms', () => {
    expect(renderError('{{ mustFromJson "{" }}')).toContain('error calling mustFromJson: unexpected end of JSON input');
  });
});

describe('sprig reflection and flow control', () => {
  it.each([
    [
      '{{ typeOf 1 }} {{ typeOf 1.5 }} {{ typeOf "s" }} {{ typeOf (list) }} {{ typeOf (dict) }} {{ typeOf nil }} {{ typeOf (semver "1.0.0") }}',
      'int float64 string []interface {} map[string]interface {} <nil> *semver.Version',
    ],
    [
      '{{ kindOf 1 }} {{ kindOf (list) }} {{ kindOf nil }} {{ kindOf (semver "1.0.0") }} {{ kindIs "map" (dict) }}',
      'int slice invalid ptr true',
    ],
    ['{{ typeIs "int64" (add 1 1) }} {{ typeIsLike "semver.Version" (semver "1.0.0") }}', 'true true'],
    [
      '{{ deepEqual (list 1 (dict "a" 1)) (list 1 (dict "a" 1)) }} {{ deepEqual 1 (int64 1) }} {{ deepEqual nil .missing }}',
      'true false true',
    ],
  ])('renders %j as %j', (template, want) => {
    expect(render(template)).toBe(want);
  });

  it('fails the render with fail', () => {
    expect(renderError('{{ fail "boom" }}')).toBe('template: tpl:1:3: executing "tpl" at <fail "boom">: error calling fail: boom');
  });
});
