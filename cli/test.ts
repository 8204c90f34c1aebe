import { configErrorsOf } from '../lib/config/errors.js';
import { parseArgs, UsageError } from './args.js';
import { type ConfigCache, readTestFile, runTestCase, type TestCase } from './config-tests.js';
import { briefReason, PathError, readTextFile, type Io } from './io.js';
import { loadFlagStageModules, STAGES_FLAG } from './stage-modules.js';

/**
 * `rivulet test FILE... [--stages PATH]...`: runs the config tests in each FILE (format in
 * docs/config-tests.md). Every file and every config it names is read and checked first; any
 * problem prints `FILE:LINE:COL: message` lines on stderr and exits 2 before a test runs. Then one
 * line per test on stdout, `ok   NAME` or `FAIL NAME` followed by its indented diff, and a last
 * line `N passed, M failed`. Exit 1 when a test failed, 0 when all passed.
 */
export async function testCommand(argv: readonly string[], io: Io): Promise<number> {
  const args = parseArgs(argv, [], [], [STAGES_FLAG]);
  if (args.positional.length === 0) throw new UsageError('test needs at least one test FILE');
  if (!(await loadFlagStageModules(args, io))) return 2;

  const tests: TestCase[] = [];
  let invalid = false;
  const configs: ConfigCache = new Map();
  for (const file of args.positional) {
    let text: string;
    try {
      text = readTextFile(file);
    } catch (err) {
      if (!(err instanceof PathError)) throw err;
      io.stderr.write(`${file}: ${briefReason(err)}\n`);
      invalid = true;
      continue;
    }
    try {
      tests.push(...(await readTestFile(file, text, configs)));
    } catch (err) {
      for (const e of configErrorsOf(err)) io.stderr.write(`${e.message}\n`);
      invalid = true;
    }
  }
  if (invalid) return 2;

  let failed = 0;
  let out = '';
  for (const test of tests) {
    const problems = await runTestCase(test);
    if (problems.length > 0) failed++;
    out += `${problems.length === 0 ? 'ok  ' : 'FAIL'} ${test.name}\n${problems.map((p) => `  ${p}\n`).join('')}`;
  }
  out += `${tests.length - failed} passed, ${failed} failed\n`;
  io.stdout.write(out);
  return failed > 0 ? 1 : 0;
}
