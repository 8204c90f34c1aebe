/**
 * The system programs some suites drive (nginx, nats-server, chromium), and whether they run.
 *
 * Outside CI a suite whose program is missing is skipped, its title saying what to install, so a
 * fresh checkout's `npm test` passes and the summary tells why those tests did not run. Under
 * `CI=true` (.ci/run installs the programs) the suite always runs: a missing program there is a
 * broken CI machine, and the suite fails with the same words instead of being skipped quietly.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/** The programs suites use, with where to look and the Debian package that brings each. */
const PROGRAMS = {
  nginx: { candidates: ['nginx', '/usr/sbin/nginx'], apt: 'nginx' },
  'nats-server': { candidates: ['nats-server', '/usr/sbin/nats-server', '/usr/bin/nats-server'], apt: 'nats-server' },
  chromium: { candidates: ['/usr/bin/chromium', 'chromium'], apt: 'chromium' },
} as const;

export type SystemBinary = keyof typeof PROGRAMS;

/** Whether tests run as CI runs them: programs must be there. */
export const inCi = process.env.CI === 'true';

const found = new Map<SystemBinary, string | undefined>();

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first candidate that is an executable file, names looked up on the PATH. */
function locate(candidates: readonly string[]): string | undefined {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((d) => d !== '');
  for (const candidate of candidates) {
    if (isAbsolute(candidate)) {
      if (executable(candidate)) return candidate;
      continue;
    }
    for (const dir of dirs) if (executable(join(dir, candidate))) return join(dir, candidate);
  }
  return undefined;
}

/** Where the program is, or undefined when it is not installed. */
export function binaryPath(binary: SystemBinary): string | undefined {
  if (!found.has(binary)) found.set(binary, locate(PROGRAMS[binary].candidates));
  return found.get(binary);
}

/** Whether the program is installed. */
export function has(binary: SystemBinary): boolean {
  return binaryPath(binary) !== undefined;
}

/** What a missing program's suite says: "nginx is not installed (apt-get install nginx)". */
export function missingReason(binary: SystemBinary): string {
  return `${binary} is not installed (apt-get install ${PROGRAMS[binary].apt})`;
}

/** A suite's view of a program it needs: whether it is skipped here, and how its titles say so. */
export interface Need {
  /** The program is missing outside CI: the suite is skipped. */
  readonly skip: boolean;
  /** The title given, followed by " — skipped: <reason>" when the suite is skipped. */
  title(title: string): string;
}

/**
 * Whether suites needing `binary` are skipped here (missing, outside CI), and their titles.
 * `where` stands in for this machine (its tests).
 */
export function needs(
  binary: SystemBinary,
  where: { readonly ci: boolean; readonly installed: boolean } = { ci: inCi, installed: has(binary) },
): Need {
  const skip = !where.ci && !where.installed;
  return { skip, title: (title) => (skip ? `${title} — skipped: ${missingReason(binary)}` : title) };
}

/** The program's path; throws the missing reason (a CI run without it fails with it). */
export function requireBinary(binary: SystemBinary): string {
  const path = binaryPath(binary);
  if (path === undefined) throw new Error(`${missingReason(binary)}${inCi ? '; CI installs it in .ci/run' : ''}`);
  return path;
}
