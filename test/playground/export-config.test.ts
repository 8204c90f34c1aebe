import { describe, expect, it } from 'vitest';
import { exportConfig } from '../../playground/export-config.js';

describe('exportConfig', () => {
  it('wraps bare stages in logs.process "default" with a forward_to, keeping comments', () => {
    expect(exportConfig('// extract\nstage.json {\n  expressions = { a = "" }\n}\n')).toEqual({
      config: [
        'logs.process "default" {',
        '  // extract',
        '  stage.json {',
        '    expressions = { a = "" }',
        '  }',
        '',
        '  // Where the processed entries go: replace with the receivers of your config.',
        '  forward_to = [loki.write.default.receiver]',
        '}',
        '',
      ].join('\n'),
      errors: [],
    });
  });

  it('adds forward_to to a logs.process block that lacks one and keeps its label', () => {
    expect(exportConfig('logs.process "web" {\n  stage.json {\n    expressions = { a = "" }\n  }\n}\n').config).toBe(
      'logs.process "web" {\n  stage.json {\n    expressions = { a = "" }\n  }\n\n  // Where the processed entries go: replace with the receivers of your config.\n  forward_to = [loki.write.default.receiver]\n}\n',
    );
  });

  it('keeps an existing forward_to', () => {
    expect(exportConfig('logs.process "web" {\n  stage.decolorize {}\n  forward_to = [loki.write.x.receiver]\n}\n').config).toBe(
      'logs.process "web" {\n  stage.decolorize {}\n  forward_to = [loki.write.x.receiver]\n}\n',
    );
  });

  it('reports a config that does not parse', () => {
    expect(exportConfig('stage.json {\n')).toEqual({
      config: '',
      errors: [{ line: 2, col: 1, message: 'expected "}" to close block "stage.json" opened at 1:12, got end of file' }],
    });
  });
});
