import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { parsePattern, PatternError } from '../../../lib/logql/pattern.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);

function errorOf(pattern: string): string {
  try {
    parsePattern(pattern);
  } catch (err) {
    expect(err).toBeInstanceOf(PatternError);
    return (err as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(pattern)} to be rejected`);
}

describe('parsePattern', () => {
  it('lists named captures in pattern order, without <_>', () => {
    expect(parsePattern('<_> <id> [<level>] <_x>').names).toEqual(['id', 'level', '_x']);
  });

  const rejected: Array<[string, string]> = [
    ['', 'parse error at line 1, col 1: syntax error: unexpected $end, expecting IDENTIFIER or LITERAL'],
    ['<_>', 'at least one capture is required'],
    ['foo <_> bar <_>', 'at least one capture is required'],
    ['foo bar buzz', 'at least one capture is required'],
    ['<foo >', 'at least one capture is required'],
    ['<f><f>', "found consecutive capture '<f><f>': invalid expression"],
    ['<f> f<d><b>', "found consecutive capture '<d><b>': invalid expression"],
    ['f<f><_>', "found consecutive capture '<f><_>': invalid expression"],
    ['<f>f<f><_>', "found consecutive capture '<f><_>': invalid expression"],
    ['<f> f<f>', 'duplicate capture name (f): invalid expression'],
    ['<a> <b> <a>', 'duplicate capture name (a): invalid expression'],
  ];
  it.each(rejected)('rejects %j', (pattern, message) => {
    expect(errorOf(pattern)).toBe(message);
  });

  it('treats malformed captures as literal text', () => {
    expect(parsePattern('<foo ><bar>').names).toEqual(['bar']);
    expect(parsePattern('<1_> <a>').names).toEqual(['a']);
    expect(parsePattern('<> <a> <é>').names).toEqual(['a']);
    expect(parsePattern('(?P<ts>[0-9]+).*').match('(?P123[0-9]+).*')).toEqual([['ts', '123']]);
  });
});

describe('LogqlPattern.match', () => {
  // Loki's own matcher fixtures (pattern_test.go) plus cases from the stage tests.
  const table: Array<[string, string, Array<[string, string]> | null]> = [
    ['foo <foo> bar', 'foo buzz bar', [['foo', 'buzz']]],
    [
      'foo <foo> bar<fuzz>',
      'foo buzz bar',
      [
        ['foo', 'buzz'],
        ['fuzz', ''],
      ],
    ],
    [
      '<foo>foo <bar> bar',
      'foo buzz bar',
      [
        ['foo', ''],
        ['bar', 'buzz'],
      ],
    ],
    [
      '<foo> bar<fuzz>',
      ' bar',
      [
        ['foo', ''],
        ['fuzz', ''],
      ],
    ],
    [
      '<foo>bar<baz>',
      ' bar ',
      [
        ['foo', ' '],
        ['baz', ' '],
      ],
    ],
    [
      '<foo> bar<baz>',
      ' bar ',
      [
        ['foo', ''],
        ['baz', ' '],
      ],
    ],
    [
      '<foo>bar <baz>',
      ' bar ',
      [
        ['foo', ' '],
        ['baz', ''],
      ],
    ],
    ['<foo>', ' bar ', [['foo', ' bar ']]],
    [
      '<path>?<_>',
      '/api/plugins/versioncheck?slugIn=snuids-trafficlights-panel,input,gel&grafanaVersion=7.0.0-beta1',
      [['path', '/api/plugins/versioncheck']],
    ],
    ['<path>?<_>', '/api/plugins/status', [['path', '/api/plugins/status']]],
    [
      '<ip> <userid> <user> [<_>] "<method> <path> <_>" <status> <size>',
      '127.0.0.1 user-identifier frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326',
      [
        ['ip', '127.0.0.1'],
        ['userid', 'user-identifier'],
        ['user', 'frank'],
        ['method', 'GET'],
        ['path', '/apache_pb.gif'],
        ['status', '200'],
        ['size', '2326'],
      ],
    ],
    [
      '<_> <id> [<level>] [<no>] [<component>] ',
      '2020-08-06T14:25:02.835618Z 0 [Note] [MY-012487] [InnoDB] DDL log recovery : begin',
      [
        ['id', '0'],
        ['level', 'Note'],
        ['no', 'MY-012487'],
        ['component', 'InnoDB'],
      ],
    ],
    [
      '<level>  [<component>]<_> in <duration>.<_>',
      'INFO  [Service Thread] 2021-05-19 07:40:12,130 GCInspector.java:284 - ParNew GC in 248ms.  CMS Old Gen: 5043436640',
      [
        ['level', 'INFO'],
        ['component', 'Service Thread'],
        ['duration', '248ms'],
      ],
    ],
    [
      '<_>][<level>][<component>] [<id>] [<index>]',
      '[2021-05-19T06:54:06,994][INFO ][o.e.c.m.MetaDataMappingService] [1f605d47-8454-4bfb-a67f-49f318bf837a] [usage-stats-2021.05.19/O2Je9IbmR8CqFyUvNpTttA] update_mapping [report]',
      [
        ['level', 'INFO '],
        ['component', 'o.e.c.m.MetaDataMappingService'],
        ['id', '1f605d47-8454-4bfb-a67f-49f318bf837a'],
        ['index', 'usage-stats-2021.05.19/O2Je9IbmR8CqFyUvNpTttA'],
      ],
    ],
    [
      '<time> <stream> <flags> <message>',
      "2019-01-01T01:00:00.000000001Z stderr P i'm a log message!",
      [
        ['time', '2019-01-01T01:00:00.000000001Z'],
        ['stream', 'stderr'],
        ['flags', 'P'],
        ['message', "i'm a log message!"],
      ],
    ],
    ['unicode <emoji> character', 'unicode 🤷 character', [['emoji', '🤷']]],
    ['unicode ▶ <what>', 'unicode ▶ character', [['what', 'character']]],
    ['HTTP/<protocol_version>', 'HTTP/1.1', [['protocol_version', '1.1']]],
    ['HTTP/<protocol_version>', 'unknown', null],
    ['HTTP/<protocol_version>', 'true', null],
    ['<foo ><bar>', '<foo >hello', [['bar', 'hello']]],
    ['<foo ><bar>', '<foo>hello', null],
    ['<1_> <a>', '<1_> x', [['a', 'x']]],
    ['<a>', '', null],
    [
      '<a> <b> <c>',
      'x y',
      [
        ['a', 'x'],
        ['b', 'y'],
      ],
    ],
    [
      '<a>,<b>;',
      'x,y;trailing text',
      [
        ['a', 'x'],
        ['b', 'y'],
      ],
    ],
    [
      '<a>,<b>;',
      'x,y',
      [
        ['a', 'x'],
        ['b', 'y'],
      ],
    ],
    ['<_>:<a>', 'no colon here', []],
  ];
  it.each(table)('matches %j against %j', (pattern, input, expected) => {
    expect(parsePattern(pattern).match(input)).toEqual(expected);
  });

  it('never throws and only returns declared names, in order', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '<', '>', '_', 'é', '😀', '-') });
    fc.assert(
      fc.property(text, text, (pattern, input) => {
        let compiled;
        try {
          compiled = parsePattern(pattern);
        } catch (err) {
          expect(err).toBeInstanceOf(PatternError);
          return;
        }
        const result = compiled.match(input);
        if (result === null) return;
        const names = result.map(([name]) => name);
        expect(compiled.names.slice(0, names.length)).toEqual(names);
      }),
      { numRuns },
    );
  });
});
