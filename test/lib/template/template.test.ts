import { describe, expect, it } from 'vitest';
import { parseTemplate, TemplateExecError, TemplateParseError, builtinFuncs, defineFunc } from '../../../lib/template/index.js';
import { T_ANY, T_STRING } from '../../../lib/template/values.js';
import { render, renderError } from './render.js';

describe('parseTemplate', () => {
  it('compiles once and renders many times with different data', () => {
    const t = parseTemplate('{{ .app | ToUpper }}-{{ .level }}', {
      funcs: { ToUpper: defineFunc([T_STRING], (s: string) => s.toUpperCase()) },
    });
    expect(t.execute({ app: 'a', level: 'x' })).toBe('A-x');
    expect(t.execute({ app: 'b', level: 'y' })).toBe('B-y');
  });

  it('names the template "template" unless told otherwise', () => {
    expect(() => parseTemplate('{{ nope }}')).toThrow('template: template:1: function "nope" not defined');
    expect(() => parseTemplate('{{ nope }}', { name: 'pipeline_template' })).toThrow(
      'template: pipeline_template:1: function "nope" not defined',
    );
  });

  it('rejects unknown functions at parse time with a TemplateParseError', () => {
    expect(() => parseTemplate('{{ NoSuchFunc .Value }}')).toThrow(TemplateParseError);
  });

  it('offers only the built-ins when no function map is given', () => {
    expect(() => parseTemplate('{{ upper "x" }}')).toThrow('function "upper" not defined');
    expect(parseTemplate('{{ len "abc" }}').execute({})).toBe('3');
  });

  it('lets given functions replace built-ins of the same name', () => {
    const funcs = { len: defineFunc([T_ANY], () => 'mine') };
    expect(parseTemplate('{{ len "abc" }}', { funcs }).execute({})).toBe('mine');
  });

  it('exposes Go built-ins as a function map', () => {
    expect(Object.keys(builtinFuncs).sort()).toEqual(
      [
        'and',
        'call',
        'eq',
        'ge',
        'gt',
        'html',
        'index',
        'js',
        'le',
        'len',
        'lt',
        'ne',
        'not',
        'or',
        'print',
        'printf',
        'println',
        'slice',
        'urlquery',
      ].sort(),
    );
  });
});

describe('text, comments and trim markers', () => {
  it.each([
    ['plain text', 'plain text'],
    ['a {{- "x" -}} b', 'axb'],
    ['a  {{- "x" }}  b', 'ax  b'],
    ['a  {{ "x" -}}  b', 'a  xb'],
    ['a\n\t {{- "x" -}} \r\n b', 'axb'],
    ['{{-3}}', '-3'],
    ['{{ -3 -}} x', '-3x'],
    ['a {{/* comment */}} b', 'a  b'],
    ['a {{- /* comment */ -}} b', 'ab'],
    ['a\n{{- /* multi\nline */}}\nb', 'a\nb'],
    ['{{"a"}}{{/* x */}}{{"b"}}', 'ab'],
  ])('renders %j as %j', (template, want) => {
    expect(render(template)).toBe(want);
  });

  it('requires the space after a left trim marker', () => {
    expect(render('{{-1}}')).toBe('-1');
  });

  it('rejects a comment not closed right before the delimiter', () => {
    expect(() => render('{{/* x */ }}')).toThrow('template: tpl:1: comment ends before closing delimiter');
    expect(() => render('{{/* x')).toThrow('template: tpl:1: unclosed comment');
  });
});

describe('fields, variables and missing keys', () => {
  const data = { s: 'hello', nested: { x: { y: 'deep' } }, l: ['a', 'b'], z: null };

  it('reads map keys and chains of them', () => {
    expect(render('{{ .s }} {{ .nested.x.y }} {{ $.s }} {{ (.nested).x.y }}', data)).toBe('hello deep hello deep');
  });

  it('prints a missing key as <no value>, also deep in a chain', () => {
    expect(render('{{ .missing }}|{{ .missing.deeper }}|{{ .nested.nope }}', data)).toBe('<no value>|<no value>|<no value>');
  });

  it('treats a missing key as nil in function arguments', () => {
    expect(render('{{ printf "%s" .missing }}|{{ printf "%v" .missing }}|{{ toString .missing }}', data)).toBe('%!s(<nil>)|<nil>|<nil>');
  });

  it('compares a missing operand as unequal without an error', () => {
    expect(render('{{ eq .missing "x" }} {{ ne .missing "x" }} {{ if .missing }}y{{ else }}n{{ end }}', data)).toBe('false true n');
  });

  it('fails when a missing value reaches a string parameter', () => {
    expect(renderError('{{ .missing | ToLower }}', data)).toBe(
      'template: tpl:1:14: executing "tpl" at <ToLower>: invalid value; expected string',
    );
    expect(renderError('{{ ToLower .missing }}', data)).toBe(
      'template: tpl:1:11: executing "tpl" at <.missing>: invalid value; expected string',
    );
  });

  it('prints a nil value as <no value> but cannot read fields through it', () => {
    expect(render('{{ .z }}', data)).toBe('<no value>');
    expect(renderError('{{ .z.x }}', data)).toBe('template: tpl:1:5: executing "tpl" at <.z.x>: nil pointer evaluating interface {}.x');
  });

  it('declares and assigns variables with Go scoping', () => {
    expect(render('{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ $y := 3 }}{{ end }}{{ $x }}')).toBe('2');
    expect(render('{{ $x := "a" }}{{ range .l }}{{ $x = . }}{{ end }}{{ $x }}', data)).toBe('b');
    expect(() => render('{{ if true }}{{ $y := 3 }}{{ end }}{{ $y }}')).toThrow('template: tpl:1: undefined variable "$y"');
  });

  it('treats null or undefined data as no data at all', () => {
    expect(render('{{ . }}|{{ .a }}', null)).toBe('<no value>|<no value>');
    expect(render('{{ .a.b }}', undefined)).toBe('<no value>');
  });

  it('rejects giving arguments to a field', () => {
    expect(renderError('{{ .s 1 }}', data)).toBe('template: tpl:1:3: executing "tpl" at <.s>: s is not a method but has arguments');
  });
});

describe('control structures', () => {
  const data = { l: ['a', 'b', 'c'], m: { b: '2', a: '1' }, e: [], s: '' };

  it('branches with if, else if and else', () => {
    expect(render('{{ if .s }}1{{ else if .e }}2{{ else if .l }}3{{ else }}4{{ end }}', data)).toBe('3');
  });

  it('rebinds dot with with, and falls back to else with', () => {
    expect(render('{{ with .l }}{{ len . }}{{ end }}', data)).toBe('3');
    expect(render('{{ with .s }}x{{ else with .m }}{{ .a }}{{ end }}', data)).toBe('1');
  });

  it('ranges over slices, sorted maps and integers', () => {
    expect(render('{{ range $i, $v := .l }}{{ $i }}{{ $v }}{{ end }}', data)).toBe('0a1b2c');
    expect(render('{{ range $k, $v := .m }}{{ $k }}={{ $v }};{{ end }}', data)).toBe('a=1;b=2;');
    expect(render('{{ range 3 }}{{ . }}{{ end }}|{{ range $i := 2 }}{{ $i }}{{ end }}')).toBe('012|01');
  });

  it('runs the else branch of an empty range', () => {
    expect(render('{{ range .e }}x{{ else }}none{{ end }}|{{ range 0 }}x{{ else }}zero{{ end }}', data)).toBe('none|zero');
  });

  it('stops with break and skips with continue', () => {
    expect(render('{{ range .l }}{{ if eq . "b" }}{{ break }}{{ end }}{{ . }}{{ end }}', data)).toBe('a');
    expect(render('{{ range .l }}{{ if eq . "b" }}{{ continue }}{{ end }}{{ . }}{{ end }}', data)).toBe('ac');
  });

  it('refuses to range over a string', () => {
    expect(renderError('{{ range .x }}{{ end }}', { x: 'abc' })).toBe(
      'template: tpl:1:9: executing "tpl" at <.x>: range can\'t iterate over abc',
    );
  });

  it('defines templates and invokes them with define, template and block', () => {
    expect(render('{{ define "t" }}[{{ . }}]{{ end }}{{ template "t" .s }}{{ template "t" "x" }}', { s: 'y' })).toBe('[y][x]');
    expect(render('{{ block "b" .l }}{{ len . }}{{ end }}', data)).toBe('3');
    expect(renderError('{{ template "nope" }}')).toBe(
      'template: tpl:1:12: executing "tpl" at <{{template "nope"}}>: template "nope" not defined',
    );
  });

  it('reports a runaway recursive template as too deep', () => {
    expect(renderError('{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}')).toContain('exceeded maximum template depth');
  });
});

describe('pipelines and literals', () => {
  it('passes the previous value as the last argument', () => {
    expect(render('{{ "x" | printf "%s-%s" "a" }}')).toBe('a-x');
    expect(render('{{ .Value | Hash "salt" }}', { Value: 'v' })).toBe(render('{{ Hash "salt" .Value }}', { Value: 'v' }));
  });

  it('keeps int and float constants apart', () => {
    expect(render('{{ printf "%T %T %T %T %T" 1 1.0 1e3 0x10 \'a\' }}')).toBe('int float64 float64 int int');
    expect(render('{{ 1_000 }} {{ 0o17 }} {{ 017 }} {{ 0b101 }} {{ .5 }} {{ 1e21 }}')).toBe('1000 15 15 5 0.5 1e+21');
  });

  it('reports Go parse errors', () => {
    expect(() => render('{{ 08 }}')).toThrow('template: tpl:1: integer overflow: "08"');
    expect(() => render('{{ "a" | "b" }}')).toThrow('template: tpl:1: non executable command in pipeline stage 2');
    expect(() => render('{{ if .x }}')).toThrow('template: tpl:1: unexpected EOF');
    expect(() => render('{{{.Value}}}')).toThrow(TemplateParseError);
  });

  it('throws TemplateExecError for execution errors', () => {
    expect(() => render('{{ index "ab" 5 }}')).toThrow(TemplateExecError);
  });

  it('calls a function value from the data with call', () => {
    expect(render('{{ call .f "a" 2 }}', { f: (a: string, b: number) => `${a}${b}` })).toBe('a2');
    expect(renderError('{{ call .s }}', { s: 'x' })).toBe(
      'template: tpl:1:3: executing "tpl" at <call .s>: error calling call: non-function .s of type string',
    );
  });
});
