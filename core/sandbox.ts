/**
 * Limits for running a config that nobody vetted, such as one restored from a playground share
 * link: its expressions and templates read no environment variable and resolve no host name, and
 * its stages open no file but the few a sandbox lists. Without a sandbox (the CLI, a component
 * graph) a config reaches all of them, as the reference agent's does.
 */
import { resolve } from 'node:path';
import type { EvalScope } from '../lib/config/evaluate.js';
import { STDLIB } from '../lib/config/stdlib.js';
import { makeObject, type ConfigValue } from '../lib/config/value.js';

export interface Sandbox {
  /** Files stages may still read, such as a sample database the host itself wrote. */
  readonly readableFiles: readonly string[];
  /** Added to every refusal: how whoever runs the sandbox can lift it. */
  readonly hint?: string;
}

/**
 * Throws unless the sandbox, if any, lets a stage read `path`. Stages that open files named in
 * their config call this first (stage.geoip does; custom stages should too, via `ctx.sandbox`).
 */
export function assertReadable(sandbox: Sandbox | undefined, path: string): void {
  if (!sandbox) return;
  const file = resolve(path);
  if (sandbox.readableFiles.some((allowed) => resolve(allowed) === file)) return;
  throw new Error(`this run may not read files such as ${JSON.stringify(path)}${hintOf(sandbox)}`);
}

function hintOf(sandbox: Sandbox): string {
  return sandbox.hint ? ` (${sandbox.hint})` : '';
}

/**
 * The scope of a sandboxed stage list: `sys.env` (and `env`) read "" for every name, as for an
 * unset variable, and `constants.hostname` is "" too.
 */
export function sandboxScope(): EvalScope {
  const constants = makeObject([...Object.entries(STDLIB.constants as Record<string, ConfigValue>), ['hostname', '']]);
  return {
    resolve: (path) => (path.length === 1 && path[0] === 'constants' ? constants : undefined),
    env: () => '',
  };
}
