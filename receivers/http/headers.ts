/**
 * Request headers read from the raw header list. Node builds `req.headers` lazily, on first use,
 * for every header of the request; reading the one or two needed from `rawHeaders` skips that on
 * the receivers' hot paths. It also gives Go's view: every value of a repeated header, or its
 * first (Node would keep only the first content-type and join repeats of other headers).
 */
import type { HttpRequest } from './server.js';

/** Every value of a header, in order. `name` is lower case. */
export function headerValues(req: HttpRequest, name: string): string[] {
  const raw = req.rawHeaders;
  const values: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (sameName(raw[i]!, name)) values.push(raw[i + 1]!);
  }
  return values;
}

/** The first value of a header (Go's `Header.Get`), or undefined. `name` is lower case. */
export function firstHeader(req: HttpRequest, name: string): string | undefined {
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (sameName(raw[i]!, name)) return raw[i + 1]!;
  }
  return undefined;
}

function sameName(key: string, lowerName: string): boolean {
  return key.length === lowerName.length && (key === lowerName || key.toLowerCase() === lowerName);
}
