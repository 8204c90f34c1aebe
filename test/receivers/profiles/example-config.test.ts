import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Block } from '../../../lib/config/ast.js';
import { parseConfig } from '../../../lib/config/parser.js';
import { ComponentGraph } from '../../../core/runtime/graph.js';
import '../../../index.js';
import { testContext } from './harness.js';

const file = join(dirname(fileURLToPath(import.meta.url)), '../../../examples/default.alloy');

describe('examples/default.alloy', () => {
  it('receives profiles on 127.0.0.1:4040 and echoes them', () => {
    const text = readFileSync(file, 'utf8');
    const blocks = parseConfig(text, file).body.filter((s): s is Block => s.kind === 'block' && s.name.startsWith('profiles.'));
    expect(blocks.map((b) => `${b.name}.${b.label}`)).toEqual(['profiles.receive_http.default', 'profiles.echo.stdout']);
    const source = blocks.map((b) => text.slice(b.pos.offset, b.endPos.offset + 1)).join('\n');
    expect(source).toContain('listen_address = "127.0.0.1"');
    expect(source).toContain('listen_port    = 4040');
    const ctx = testContext('example');
    const graph = new ComponentGraph((id) => ({ ...ctx, id }));
    graph.load(source, file);
    expect(graph.health().map((c) => [c.id, c.health.state])).toEqual([
      ['profiles.echo.stdout', 'healthy'],
      ['profiles.receive_http.default', 'healthy'],
    ]);
  });
});
