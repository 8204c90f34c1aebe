/**
 * URL paths the way Go's server side reads them: `net/url` percent-decodes the request path
 * before any handler sees it, and gorilla/mux (the reference's router) redirects a path that is
 * not in canonical form to its cleaned form.
 *
 * Paths are byte strings here, one character per byte (Node gives the request target that way),
 * so a decoded `%FF` stays the byte it was and escaping it again gives back `%FF`.
 */

/**
 * The request path with every `%XX` decoded, as `url.ParseRequestURI` decodes it (a `+` stays a
 * `+`); undefined when a `%` is not followed by two hex digits, which Go's server refuses with a
 * 400 before routing.
 */
export function unescapeGoPath(raw: string): string | undefined {
  if (!raw.includes('%')) return raw;
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c !== '%') {
      out += c;
      continue;
    }
    const hex = raw.slice(i + 1, i + 3);
    if (!/^[0-9a-fA-F]{2}$/.test(hex)) return undefined;
    out += String.fromCharCode(Number.parseInt(hex, 16));
    i += 2;
  }
  return out;
}

/**
 * gorilla/mux's canonical form of a path: rooted, `path.Clean` applied (repeated slashes, `.`
 * and `..` elements removed), and a trailing slash kept when the path had one.
 */
export function cleanGoPath(path: string): string {
  if (path === '') return '/';
  const rooted = path.startsWith('/') ? path : `/${path}`;
  const kept: string[] = [];
  for (const element of rooted.split('/')) {
    if (element === '' || element === '.') continue;
    if (element === '..') kept.pop();
    else kept.push(element);
  }
  const cleaned = `/${kept.join('/')}`;
  return rooted.endsWith('/') && cleaned !== '/' ? `${cleaned}/` : cleaned;
}

/**
 * A decoded path escaped again as Go's `URL.EscapedPath` does when it has no raw form to reuse:
 * letters, digits, `-_.~` and `$&+,/:;=@` stay, every other byte becomes `%XX` (upper case).
 */
export function escapeGoPath(path: string): string {
  let out = '';
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i);
    out += PATH_SAFE.test(path[i]!) ? path[i] : `%${(code & 0xff).toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const PATH_SAFE = /^[A-Za-z0-9\-_.~$&+,/:;=@]$/;
