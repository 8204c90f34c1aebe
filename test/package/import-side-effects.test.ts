import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

/**
 * Importing the built library in plain Node starts nothing, listens on nothing and changes no
 * process-wide setting: V8's regex flags stay as they were, so user patterns run on RE2 until the
 * program itself calls `enableLinearTimeRegex()`.
 */
const run = promisify(execFile);
const library = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '../../dist/index.js')).href;

// Standard streams (created on first use by Node itself) are not the library's handles.
const script = `
const handles = () => process.getActiveResourcesInfo().filter((r) => !['TTYWrap', 'PipeWrap'].includes(r));
const settled = () => new Promise((resolve) => setTimeout(resolve, 20));
const before = { handles: handles(), signals: process.listenerCount('SIGINT') + process.listenerCount('SIGTERM') };
const linearFlag = () => { try { new RegExp('', 'l'); return true; } catch { return false; } };
const r = await import(${JSON.stringify(library)});
const { from, lastValueFrom, toArray } = await import('rxjs');
await settled();
const afterImport = { handles: handles(), signals: process.listenerCount('SIGINT') + process.listenerCount('SIGTERM'), linearFlag: linearFlag(), enabled: r.linearTimeRegexEnabled() };
const entry = { labels: {}, line: 'GET /index.html 200', timestamp: 0n, structuredMetadata: [], extracted: {} };
const out = await lastValueFrom(from([entry]).pipe(r.pipeline([r.regex({ expression: '^(?P<method>\\\\S+) (?P<path>\\\\S+) (?P<status>\\\\d+)$' })]), toArray()));
const afterRegex = { linearFlag: linearFlag(), extracted: out[0].extracted };
r.enableLinearTimeRegex();
console.log(JSON.stringify({ before, afterImport, afterRegex, afterEnable: { linearFlag: linearFlag(), enabled: r.linearTimeRegexEnabled() } }));
`;

it('importing the library has no side effects and leaves the V8 regex flags to the program', async () => {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: dirname(fileURLToPath(import.meta.url)) });
  expect(JSON.parse(stdout)).toEqual({
    before: { handles: [], signals: 0 },
    afterImport: { handles: [], signals: 0, linearFlag: false, enabled: false },
    afterRegex: { linearFlag: false, extracted: { method: 'GET', path: '/index.html', status: '200' } },
    afterEnable: { linearFlag: true, enabled: true },
  });
});
