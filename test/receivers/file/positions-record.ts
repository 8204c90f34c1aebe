/** What the file source writes to a positions file for `files`, each read to its end, for tests to compare with. */
import { statSync } from 'node:fs';

export function positionsOf(files: readonly string[]) {
  return {
    version: 1,
    files: Object.fromEntries(
      [...files]
        .sort((a, b) => a.localeCompare(b))
        .map((file) => {
          const st = statSync(file, { bigint: true });
          return [file, { offset: String(st.size), dev: String(st.dev), ino: String(st.ino) }];
        }),
    ),
  };
}
