import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import '../../../index.js';
import { convertAlloy } from '../../../cli/convert/alloy.js';
import { ConfigErrors } from '../../../lib/config/errors.js';

const convert = (text: string, keepNames = true) => convertAlloy(text, 'config.alloy', { keepNames });

describe('convert --from alloy', () => {
  it('renames components in block names and references and keeps every other byte, comments included', () => {
    // The same config in the reference's names (loki) and in Rivulet's (logs): only the component names change.
    const config = (ns: 'loki' | 'logs') => `// loki.write "comment" stays as written
${ns}.source.api "in" {
\thttp { listen_port = 0 }
\tforward_to = [ ${ns}.process.p.receiver ,${ns}.echo.e.receiver] /* loki.echo */
}

${ns}.process   "p"   {
  forward_to = [${ns}.write.out.receiver]
  stage.static_labels { values = { source = "loki.process" } }
}
${ns}.echo "e" {}
${ns}.write "out" {
  endpoint { url = "http://127.0.0.1:1/loki/api/v1/push" }
}
`;
    expect(convert(config('loki'))).toEqual({ output: config('logs'), warnings: [] });
  });

  it('renames the profiles components and stage.windowsevent', () => {
    const text =
      'pyroscope.receive_http "r" {\n  forward_to = [pyroscope.write.w.receiver]\n}\nloki.process "p" {\n  forward_to = []\n  stage.windowsevent { }\n}\n';
    expect(convert(text).output).toBe(
      'profiles.receive_http "r" {\n  forward_to = [profiles.write.w.receiver]\n}\nlogs.process "p" {\n  forward_to = []\n  stage.hostevent { }\n}\n',
    );
  });

  it("writes out the reference's metrics prefix in each metric block without one (lined up with the attribute above) or with an empty one", () => {
    // The same config before (loki) and after (logs) conversion: the component renamed, the prefixes written out.
    const config = (ns: 'loki' | 'logs') => {
      const becomes = (before: string, after: string) => (ns === 'loki' ? before : after);
      return `${ns}.process "p" {
  forward_to = []
  stage.match {
    selector = "{a=\\"b\\"}"
    stage.metrics {
      metric.counter {
        name      = "hits"
        match_all = true
        action    = "inc"
${becomes('', '        prefix    = "loki_process_custom_"\n')}      }
      metric.gauge {
        name = "g"
        action = "set"
${becomes('', '        prefix = "loki_process_custom_"\n')}      }
      metric.histogram {
        name    = "h"
        buckets = [1]
        prefix  = "mine_"
      }
      metric.counter {
        name   = "empty"
        action = "inc"
        prefix = ${becomes('""', '"loki_process_custom_"')}
      }
    }
  }
}
`;
    };
    expect(convert(config('loki')).output).toBe(config('logs'));
  });

  it('puts the prefix on a line of its own in a metric block written on one line', () => {
    const text = 'stage.metrics {\n  metric.counter { name = "n" }\n}\n';
    expect(convert(text).output).toBe('stage.metrics {\n  metric.counter { name = "n"\n  prefix = "loki_process_custom_"\n  }\n}\n');
  });

  it("leaves metric blocks alone with keepNames off, so Rivulet's own prefix applies", () => {
    const text =
      'loki.process "p" {\n  forward_to = []\n  stage.metrics {\n    metric.counter {\n      name = "n"\n      action = "inc"\n    }\n  }\n}\n';
    expect(convert(text, false).output).toBe(text.replace('loki.process', 'logs.process'));
  });

  it('folds a local.file_match into the file source that reads its targets', () => {
    const text = `logs.echo "e" {}

local.file_match "logs" {
  path_targets = [{ __path__ = "/var/log/*.log" }]
}

loki.source.file "f" {
  targets    = local.file_match.logs.targets
  forward_to = [logs.echo.e.receiver]
}
`;
    expect(convert(text)).toEqual({
      output: `logs.echo "e" {}

logs.source.file "f" {
  targets    = [{ __path__ = "/var/log/*.log" }]
  forward_to = [logs.echo.e.receiver]
}
`,
      warnings: [],
    });
  });

  it('keeps a local.file_match it cannot fold, and a component Rivulet does not have, with warnings at them', () => {
    const text = `local.file_match "logs" {
  path_targets = discovery.kubernetes.pods.targets
  sync_period  = "5s"
}

discovery.kubernetes "pods" {
  role = "pod"
}
`;
    expect(convert(text)).toEqual({
      output: text,
      warnings: [
        {
          file: 'config.alloy',
          line: 1,
          col: 1,
          message:
            "Rivulet has no component local.file_match and this one cannot be folded into its readers (it sets more than path_targets, or is read other than as .targets); give its path_targets to logs.source.file's targets",
        },
        { file: 'config.alloy', line: 6, col: 1, message: 'Rivulet has no component discovery.kubernetes; the block is left as written' },
      ],
    });
  });

  it('warns at each attribute and block the Rivulet component or stage does not have, and keeps them', () => {
    const text = `loki.source.file "f" {
  targets    = []
  forward_to = []
  encoding   = "UTF-16"
  decompression {
    enabled = true
  }
}
loki.process "p" {
  forward_to = []
  stage.match {
    selector = "{a=\\"b\\"}"
    stage.json {
      expressions = {}
      strict      = true
    }
    stage.nope { }
  }
}
`;
    const { output, warnings } = convert(text);
    expect(output).toBe(text.replace('loki.source.file', 'logs.source.file').replace('loki.process', 'logs.process'));
    expect(warnings.map((w) => `${w.line}:${w.col}: ${w.message}`)).toEqual([
      "4:3: Rivulet's logs.source.file has no attribute encoding; left as written",
      "5:3: Rivulet's logs.source.file has no block decompression; left as written",
      "15:7: Rivulet's logs.process > stage.match > stage.json has no attribute strict; left as written",
      "17:5: Rivulet's logs.process > stage.match has no block stage.nope; left as written",
    ]);
  });

  it('renames inside custom components and takes their instances and imports for what they are', () => {
    const text = `declare "pipeline" {
  argument "write_to" { }
  loki.process "p" {
    forward_to = argument.write_to.value
  }
  export "receiver" {
    value = loki.process.p.receiver
  }
}
import.file "mods" {
  filename = "mods.alloy"
}
pipeline "default" {
  write_to = [loki.echo.e.receiver]
}
mods.tail "app" { }
loki.echo "e" { }
`;
    expect(convert(text)).toEqual({ output: text.replaceAll('loki.', 'logs.'), warnings: [] });
  });

  it("throws the parser's positioned errors for a config that does not parse", () => {
    let thrown: unknown;
    try {
      convert('loki.write "w" {\n  = 1\n}\n');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigErrors);
    expect((thrown as ConfigErrors).errors.map((e) => e.message)).toEqual(['config.alloy:2:3: expected attribute or block name, got "="']);
  });
});

describe('convert --from alloy: property', () => {
  /** A config written twice from the same choices: with the reference's names, and with Rivulet's. */
  const component = fc.record({
    kind: fc.constantFrom(['loki.echo', 'logs.echo'], ['loki.process', 'logs.process'], ['loki.write', 'logs.write']),
    label: fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/),
    gap: fc.stringMatching(/^[ \t]{1,3}$/),
    comment: fc.option(fc.stringMatching(/^[^\n\r*]{0,20}$/), { nil: undefined }),
    target: fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/),
  });

  it('changes nothing but the names: comments, blanks and layout stay byte for byte', () => {
    fc.assert(
      fc.property(fc.array(component, { minLength: 1, maxLength: 6 }), fc.stringMatching(/^\n{1,3}$/), (components, between) => {
        const write = (names: 0 | 1) =>
          components
            .map(({ kind, label, gap, comment, target }) => {
              const name = kind[names];
              const reference = `${['loki.echo', 'logs.echo'][names]}.${target}.receiver`;
              const body = name.endsWith('echo')
                ? ''
                : `\n${gap}forward_to = [${reference}]${comment === undefined ? '' : ` // ${comment}`}\n`;
              return `${comment === undefined ? '' : `/* ${comment} */\n`}${name}${gap}"${label}" {${body}}`;
            })
            .join(between);
        expect(convert(`${write(0)}\n`, false).output).toBe(`${write(1)}\n`);
      }),
    );
  });
});
