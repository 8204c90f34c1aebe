/**
 * The one rule for suites that need a system program: skipped with the reason in their title
 * when it is missing outside CI, run (and failing with that reason) under CI.
 */
import { describe, expect, it } from 'vitest';
import { binaryPath, has, missingReason, needs } from './system-binaries.js';

describe('system binaries', () => {
  it('skips a suite whose program is missing outside CI, saying what to install', () => {
    const need = needs('nginx', { ci: false, installed: false });
    expect([need.skip, need.title('two receivers behind nginx')]).toEqual([
      true,
      'two receivers behind nginx — skipped: nginx is not installed (apt-get install nginx)',
    ]);
  });

  it('runs the suite under CI even when the program is missing, and wherever it is installed', () => {
    for (const where of [
      { ci: true, installed: false },
      { ci: true, installed: true },
      { ci: false, installed: true },
    ]) {
      const need = needs('chromium', where);
      expect([where, need.skip, need.title('the run server page')]).toEqual([where, false, 'the run server page']);
    }
  });

  it('names the Debian package of each program', () => {
    expect(['nginx', 'nats-server', 'chromium'].map((b) => missingReason(b as 'nginx'))).toEqual([
      'nginx is not installed (apt-get install nginx)',
      'nats-server is not installed (apt-get install nats-server)',
      'chromium is not installed (apt-get install chromium)',
    ]);
  });

  it('finds a program by absolute path or on the PATH, and has() agrees', () => {
    for (const binary of ['nginx', 'nats-server', 'chromium'] as const) {
      const path = binaryPath(binary);
      expect([binary, has(binary)]).toEqual([binary, path !== undefined]);
      if (path !== undefined) expect(path).toMatch(new RegExp(`/${binary}$`));
    }
  });
});
