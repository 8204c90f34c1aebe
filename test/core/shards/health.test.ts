/**
 * The health of components that run on the shards: the main thread's stand-ins report what the
 * shards last said of them (asked every second, right after start and after each reload), so the
 * run server shows a component unhealthy on a shard as in place it shows it unhealthy, with each
 * shard's message after its index.
 */
import { mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { healthy, unhealthy } from '../../../core/runtime/component.js';
import { combinedHealth } from '../../../core/shards/sharded-run.js';
import { fnv1a32 } from '../../../lib/fnv1a.js';
import { eventually } from '../../support/running-instance.js';
import { runConfig, type CommandRun } from './support.js';

/** A logs.source.file tailing `*.log` in a directory of its own, its positions beside them. */
function fileSource(label: string, dir: string): string {
  return `logs.source.file ${JSON.stringify(label)} {
  path           = ${JSON.stringify(join(dir, '*.log'))}
  positions_file = ${JSON.stringify(join(dir, 'positions.json'))}
  forward_to     = [logs.process.p.receiver]
}
`;
}

function config(sources: Readonly<Record<string, string>>): string {
  return `${Object.entries(sources)
    .map(([label, dir]) => fileSource(label, dir))
    .join('\n')}
logs.process "p" {
  stage.logfmt {
    mapping = { level = "" }
  }
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" { }
`;
}

/** A directory for a source: its positions file is `{`, which is not JSON, when `broken`. */
function sourceDir(root: string, label: string, broken: boolean): string {
  const dir = join(root, label);
  mkdirSync(dir);
  writeFileSync(join(dir, 'app.log'), 'level=info msg=one\n');
  if (broken) writeFileSync(join(dir, 'positions.json'), '{');
  return dir;
}

/** `/api/v0/components`: each component's id, state and message. */
async function components(run: CommandRun): Promise<{ id: string; state: string; message: string }[]> {
  const res = await fetch(`${run.runUrl}/api/v0/components`);
  const list = (await res.json()) as { id: string; health: { state: string; message: string } }[];
  return list.map(({ id, health }) => ({ id, state: health.state, message: health.message }));
}

async function healthz(run: CommandRun): Promise<{ status: number; text: string }> {
  const res = await fetch(`${run.runUrl}/-/healthy`);
  return { status: res.status, text: await res.text() };
}

/** Runs `text` in place (no flags) or sharded, and gives what the run server says of health. */
async function healthOf(text: (root: string) => string, flags: readonly string[]) {
  const root = mkdtempSync(join(tmpdir(), 'rivulet-shards-health-'));
  const run = await runConfig(text(root), flags, []);
  try {
    return { root, components: await components(run), healthy: await healthz(run) };
  } finally {
    expect(await run.stop()).toBe(0);
  }
}

const notJson = (root: string, label: string) =>
  `positions file ${join(root, label, 'positions.json')} is not valid JSON: Expected property name or '}' in JSON at position 1`;

describe('the health of components on the shards', () => {
  it('is unhealthy where a shard reports it so, each shard message after its index, and healthy as in place elsewhere', {
    timeout: 60_000,
  }, async () => {
    const text = (root: string) => config({ good: sourceDir(root, 'good', false), broken: sourceDir(root, 'broken', true) });
    const inPlace = await healthOf(text, []);
    const sharded = await healthOf(text, ['--shards', '2']);
    const expected = (broken: string) => [
      { id: 'logs.echo.out', state: 'healthy', message: 'started component' },
      { id: 'logs.process.p', state: 'healthy', message: 'started component' },
      { id: 'logs.source.file.good', state: 'healthy', message: 'started component' },
      { id: 'logs.source.file.broken', state: 'unhealthy', message: broken },
    ];
    expect(inPlace.components).toEqual(expected(notJson(inPlace.root, 'broken')));
    expect(sharded.components).toEqual(
      expected(`shard 0: ${notJson(sharded.root, 'broken')}; shard 1: ${notJson(sharded.root, 'broken')}`),
    );
    for (const { healthy } of [inPlace, sharded])
      expect(healthy).toEqual({ status: 500, text: 'unhealthy components: logs.source.file.broken\n' });
  });

  it('is healthy on a healthy config, and follows a reload as soon as the reload is answered', { timeout: 60_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'rivulet-shards-health-'));
    const good = sourceDir(root, 'good', false);
    const broken = sourceDir(root, 'broken', true);
    const run = await runConfig(config({ good }), ['--shards', '2'], []);
    const reload = async (text: string) => {
      writeFileSync(run.file, text);
      const res = await fetch(`${run.runUrl}/-/reload`, { method: 'POST', headers: { 'X-Rivulet-Reload': '1' } });
      expect({ status: res.status, text: await res.text() }).toEqual({ status: 200, text: 'config reloaded\n' });
    };
    const allHealthy = [
      'logs.echo.out healthy started component',
      'logs.process.p healthy started component',
      'logs.source.file.good healthy started component',
    ];
    try {
      expect((await components(run)).map(({ id, state, message }) => `${id} ${state} ${message}`)).toEqual(allHealthy);
      expect(await healthz(run)).toEqual({ status: 200, text: 'All components are healthy.\n' });
      await reload(config({ good, broken }));
      expect((await components(run)).find(({ id }) => id === 'logs.source.file.broken')).toEqual({
        id: 'logs.source.file.broken',
        state: 'unhealthy',
        message: `shard 0: ${notJson(root, 'broken')}; shard 1: ${notJson(root, 'broken')}`,
      });
      await reload(config({ good }));
      expect((await components(run)).map(({ id, state, message }) => `${id} ${state} ${message}`)).toEqual(allHealthy);
      expect(await healthz(run)).toEqual({ status: 200, text: 'All components are healthy.\n' });
    } finally {
      expect(await run.stop()).toBe(0);
    }
  });
});

describe('the health of components on the shards, while running', () => {
  it('follows a component turning unhealthy on its shard and back, within about a second, without a reload', {
    timeout: 60_000,
  }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'rivulet-shards-health-'));
    // The file's directory is a link, swapped in one step for a link to a plain file and back: its
    // path then fails to stat (not a directory), without a moment when it is missing.
    const file = join(root, 'sub', 'app.log');
    mkdirSync(join(root, 'dir'));
    writeFileSync(join(root, 'dir', 'app.log'), 'level=info msg=one\n');
    writeFileSync(join(root, 'plain'), '');
    const linkSub = (to: string) => {
      symlinkSync(join(root, to), join(root, 'next'));
      renameSync(join(root, 'next'), join(root, 'sub'));
    };
    linkSub('dir');
    // Globs are not expanded again meanwhile, so the file stays tailed (and its reading failing)
    // while its directory is a plain file.
    const run = await runConfig(
      `logs.source.file "files" {
  path       = ${JSON.stringify(file)}
  file_watch {
    min_poll_frequency = "10ms"
    max_poll_frequency = "10ms"
  }
  file_match {
    sync_period = "1h"
  }
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" { }
`,
      ['--shards', '2'],
      [],
    );
    const fileSourceHealth = async () => {
      const health = (await components(run)).find(({ id }) => id === 'logs.source.file.files')!;
      return `${health.state} ${health.message}`;
    };
    try {
      await eventually(() => run.stdout().includes('msg=one'), 'the line read');
      expect(await fileSourceHealth()).toBe('healthy started component');
      linkSub('plain');
      await eventually(async () => (await fileSourceHealth()).startsWith('unhealthy'), 'the shard reporting it unhealthy', 5_000);
      expect(await fileSourceHealth()).toBe(
        `unhealthy shard ${fnv1a32(file) % 2}: reading ${file}: ENOTDIR: not a directory, stat '${file}'`,
      );
      linkSub('dir');
      await eventually(async () => (await fileSourceHealth()).startsWith('healthy'), 'the shard reporting it healthy again', 5_000);
      expect(await fileSourceHealth()).toBe('healthy started component');
    } finally {
      expect(await run.stop()).toBe(0);
    }
  });
});

describe('combinedHealth', () => {
  const at = (health: ReturnType<typeof healthy>, ms: number) => ({ ...health, updatedAt: new Date(ms) });

  it('is undefined until a shard reported the component', () => {
    expect(combinedHealth([undefined, undefined])).toBeUndefined();
  });

  it('is healthy with the first reporting shard message when every reporting shard is healthy, at the latest time', () => {
    expect(combinedHealth([undefined, at(healthy('tailing'), 5), at(healthy('other'), 9)])).toEqual(at(healthy('tailing'), 9));
  });

  it('is unhealthy with every unhealthy shard message after its index, at the latest of their times', () => {
    expect(combinedHealth([at(healthy(), 50), at(unhealthy('down'), 7), at(unhealthy('refused'), 3)])).toEqual(
      at(unhealthy('shard 1: down; shard 2: refused'), 7),
    );
  });
});
