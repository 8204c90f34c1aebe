/**
 * `npm run gen:reference`: rewrites docs/reference (one page per stage and per component, plus
 * the index) from the registries' schemas, and removes pages of stages or components that are
 * gone. test/cli/reference-docs.test.ts fails while the pages are stale.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REFERENCE_DIR, referencePages } from '../cli/reference-docs.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = join(root, REFERENCE_DIR);
const pages = referencePages();

function listPages(at: string): string[] {
  let names: string[];
  try {
    names = readdirSync(at, { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return names.filter((name) => name.endsWith('.md')).map((name) => relative(dir, join(at, name)).split(sep).join('/'));
}

for (const old of listPages(dir)) if (!pages.has(old)) rmSync(join(dir, old));
for (const [page, text] of pages) {
  mkdirSync(dirname(join(dir, page)), { recursive: true });
  writeFileSync(join(dir, page), text);
}
process.stdout.write(`wrote ${pages.size} pages to ${REFERENCE_DIR}\n`);
