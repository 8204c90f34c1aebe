/**
 * Path globs as the reference's file discovery reads them (doublestar syntax): `*` and `?`
 * within one path segment, `[abc]`, `[a-z]` and `[!a]`/`[^a]` classes, `{a,b}` alternatives,
 * `**` as a whole segment for any number of directories, and `\` to escape. Dot files are not
 * special. Matching walks the pattern directly (no regular expressions are built from it).
 */
import { readdir, stat } from 'node:fs/promises';
import { isAbsolute, join, sep } from 'node:path';

/** Whether the pattern has any glob syntax (otherwise it names one path). */
export function hasGlobSyntax(pattern: string): boolean {
  return /[*?[{\\]/.test(pattern);
}

/** Expands `{a,b}` alternatives (nested ones too) into plain glob patterns. */
export function expandBraces(pattern: string): string[] {
  let depth = 0;
  let open = -1;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '{') {
      if (depth === 0) open = i;
      depth++;
    } else if (ch === '}' && depth > 0) {
      depth--;
      if (depth === 0) {
        const options = splitTopLevel(pattern.slice(open + 1, i));
        const head = pattern.slice(0, open);
        const tail = pattern.slice(i + 1);
        return options.flatMap((option) => expandBraces(head + option + tail));
      }
    }
  }
  return [pattern];
}

function splitTopLevel(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === '\\') i++;
    else if (ch === '{') depth++;
    else if (ch === '}') depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

/** Matches one path segment against one pattern segment (no `/`, no braces). */
export function matchSegment(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  let starP = -1;
  let starN = 0;
  while (n < name.length) {
    if (p < pattern.length) {
      const ch = pattern[p]!;
      if (ch === '*') {
        starP = p++;
        starN = n;
        continue;
      }
      if (ch === '?') {
        p++;
        n++;
        continue;
      }
      if (ch === '[') {
        const cls = matchClass(pattern, p, name[n]!);
        if (cls.end > 0 && cls.matched) {
          p = cls.end;
          n++;
          continue;
        }
      } else {
        const literal = ch === '\\' && p + 1 < pattern.length ? pattern[p + 1]! : ch;
        if (literal === name[n]) {
          p += ch === '\\' && p + 1 < pattern.length ? 2 : 1;
          n++;
          continue;
        }
      }
    }
    if (starP < 0) return false;
    p = starP + 1;
    n = ++starN;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

/** A `[...]` class at `start`: whether `ch` is in it, and the index just past it (0 if unclosed). */
function matchClass(pattern: string, start: number, ch: string): { matched: boolean; end: number } {
  let i = start + 1;
  const negate = pattern[i] === '!' || pattern[i] === '^';
  if (negate) i++;
  let matched = false;
  let first = true;
  while (i < pattern.length && (pattern[i] !== ']' || first)) {
    first = false;
    let lo = pattern[i]!;
    if (lo === '\\' && i + 1 < pattern.length) lo = pattern[++i]!;
    i++;
    let hi = lo;
    if (pattern[i] === '-' && i + 1 < pattern.length && pattern[i + 1] !== ']') {
      hi = pattern[i + 1]!;
      if (hi === '\\' && i + 2 < pattern.length) {
        hi = pattern[i + 2]!;
        i++;
      }
      i += 2;
    }
    if (ch >= lo && ch <= hi) matched = true;
  }
  if (i >= pattern.length) return { matched: false, end: 0 };
  return { matched: matched !== negate, end: i + 1 };
}

/** Whether a whole path matches a glob (segments separated by `/`; `**` spans directories). */
export function matchPath(pattern: string, path: string): boolean {
  return expandBraces(pattern).some((p) => matchSegments(p.split('/'), 0, path.split('/'), 0));
}

function matchSegments(pattern: readonly string[], pi: number, parts: readonly string[], ni: number): boolean {
  if (pi === pattern.length) return ni === parts.length;
  if (pattern[pi] === '**') {
    for (let k = ni; k <= parts.length; k++) if (matchSegments(pattern, pi + 1, parts, k)) return true;
    return false;
  }
  if (ni === parts.length) return false;
  return matchSegment(pattern[pi]!, parts[ni]!) && matchSegments(pattern, pi + 1, parts, ni + 1);
}

/** Undoes `\` escapes in a segment without other glob syntax. */
function unescape(segment: string): string {
  return segment.replace(/\\(.)/g, '$1');
}

/**
 * The regular files matching a glob, sorted. A pattern without glob syntax names one file (it is
 * returned when it exists). Unreadable directories are skipped.
 */
export async function globFiles(pattern: string): Promise<string[]> {
  const found = new Set<string>();
  for (const expanded of expandBraces(pattern)) {
    const absolute = isAbsolute(expanded);
    const segments = expanded.split('/').filter((s, i) => s !== '' || i === 0);
    if (absolute) segments.shift();
    await walk(absolute ? sep : '.', segments, 0, absolute, found);
  }
  return [...found].sort();
}

async function walk(dir: string, segments: readonly string[], index: number, absolute: boolean, found: Set<string>): Promise<void> {
  const display = (path: string) => (absolute ? path : path.replace(/^\.\//, ''));
  if (index === segments.length) {
    if (await isFile(dir)) found.add(display(dir));
    return;
  }
  const segment = segments[index]!;
  if (segment === '**') {
    await walk(dir, segments, index + 1, absolute, found);
    for (const child of await subdirectories(dir)) await walk(join(dir, child), segments, index, absolute, found);
    return;
  }
  if (!hasGlobSyntax(segment)) {
    await walk(join(dir, unescape(segment)), segments, index + 1, absolute, found);
    return;
  }
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names.sort()) {
    if (matchSegment(segment, name)) await walk(join(dir, name), segments, index + 1, absolute, found);
  }
}

async function subdirectories(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
