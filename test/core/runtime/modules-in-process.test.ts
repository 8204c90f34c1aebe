import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { echoedEntries, startInProcess } from '../../e2e/support.js';

/** A push API and a labelling pipeline: the env label and where they forward to are expressions. */
const pipeline = (env: string, forwardTo: string): string => `logs.source.api "in" {
  http {
    listen_address = "127.0.0.1"
    listen_port    = 0
  }
  use_incoming_timestamp = true
  forward_to = [logs.process.label.receiver]
}

logs.process "label" {
  stage.static_labels {
    values = { env = ${env} }
  }
  forward_to = ${forwardTo}
}
`;

/** The pipeline packaged as a custom component, with the echo sink outside it. */
const MODULE = `declare "ingest" {
  argument "env" { }
  argument "forward_to" { }

${pipeline('argument.env.value', 'argument.forward_to.value')
  .split('\n')
  .map((line) => (line === '' ? line : `  ${line}`))
  .join('\n')}}
`;

const echo = (file: string): string => `logs.echo "out" {
  path = ${JSON.stringify(file)}
}
`;

/** The pipeline written out where the custom component is used. */
const INLINED = pipeline('"prod"', '[logs.echo.out.receiver]');

const PUSH = JSON.stringify({
  streams: [
    { stream: { app: 'a' }, values: [['1000000000', 'first']] },
    { stream: { app: 'b' }, values: [['2000000000', 'second']] },
  ],
});

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Runs `config`, pushes PUSH to the logs.source.api `apiId` and gives what logs.echo wrote. */
async function pushThrough(config: (echoFile: string) => string, apiId: string): Promise<ReturnType<typeof echoedEntries>> {
  dir ??= mkdtempSync(join(tmpdir(), 'modules-'));
  const echoFile = join(dir, `${apiId.replace(/\W/g, '_')}.jsonl`);
  const run = await startInProcess(config(echoFile), 'modules.alloy');
  try {
    const res = await fetch(`${run.apiUrl(apiId)}/loki/api/v1/push`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: PUSH,
    });
    expect(res.status).toBe(204);
  } finally {
    await run.stop();
  }
  return echoedEntries(echoFile);
}

describe('a config with custom components, run in process', () => {
  it('processes a push exactly as its inlined form', async () => {
    const inlined = await pushThrough((file) => INLINED + echo(file), 'logs.source.api.in');
    const declared = await pushThrough(
      (file) => `${MODULE}
ingest "default" {
  env        = "prod"
  forward_to = [logs.echo.out.receiver]
}
${echo(file)}`,
      'ingest.default/logs.source.api.in',
    );
    const viaString = await pushThrough(
      (file) => `import.string "mods" {
  content = ${JSON.stringify(MODULE)}
}
mods.ingest "default" {
  env        = "prod"
  forward_to = [logs.echo.out.receiver]
}
${echo(file)}`,
      'mods.ingest.default/logs.source.api.in',
    );
    expect(inlined).toEqual([
      { labels: { app: 'a', env: 'prod' }, line: 'first', timestamp: '1970-01-01T00:00:01.000000000Z', structured_metadata: {} },
      { labels: { app: 'b', env: 'prod' }, line: 'second', timestamp: '1970-01-01T00:00:02.000000000Z', structured_metadata: {} },
    ]);
    expect(declared).toEqual(inlined);
    expect(viaString).toEqual(inlined);
  });
});
