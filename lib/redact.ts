/**
 * Keeping credentials out of everything a component shows: log lines, error messages, metric
 * labels, health messages. Every component that is given a secret (a password, a token, a secret
 * header, credentials in a URL) sends what it shows through these functions.
 *
 * URL credentials follow Go's HTTP client, as the reference does: a URL's userinfo is not sent
 * in the URL but as `Authorization: Basic …` (user and password percent-decoded), unless the
 * request already carries an Authorization header; where a URL is shown, its password reads
 * `xxxxx` (Go's `URL.Redacted`).
 *
 * @example
 * redactUrl('http://ops:s3cret@loki:3100/push') // 'http://ops:xxxxx@loki:3100/push'
 * splitUserinfo('http://ops:s3cret@loki:3100/push')
 * // { url: 'http://loki:3100/push', username: 'ops', password: 's3cret' }
 */

/** What stands in for a hidden password or secret value. */
export const REDACTED = 'xxxxx';

/** Secrets shorter than this are not searched for in text: they would mask ordinary words. */
const MIN_SECRET_LENGTH = 4;

/** `scheme://userinfo@`: the userinfo ends at the last `@` before the path, query or fragment. */
const AUTHORITY = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)/;

/** The userinfo of a URL and the URL without it; undefined parts when it has none. */
export function splitUserinfo(url: string): { url: string; username?: string; password?: string } {
  const m = AUTHORITY.exec(url);
  const at = m ? m[2]!.lastIndexOf('@') : -1;
  if (!m || at < 0) return { url };
  const userinfo = m[2]!.slice(0, at);
  const rest = url.slice(m[1]!.length + at + 1);
  const colon = userinfo.indexOf(':');
  const username = unescape(colon < 0 ? userinfo : userinfo.slice(0, colon));
  return { url: m[1]! + rest, username, ...(colon < 0 ? {} : { password: unescape(userinfo.slice(colon + 1)) }) };
}

/**
 * The `Authorization` header a URL's userinfo stands for, as Go's client sends it (`Basic` with
 * the decoded `user:password`); undefined for a URL without userinfo.
 */
export function userinfoAuthorization(url: string): string | undefined {
  const { username, password } = splitUserinfo(url);
  if (username === undefined) return undefined;
  return `Basic ${Buffer.from(`${username}:${password ?? ''}`).toString('base64')}`;
}

/** The URL with the password of its userinfo, if any, replaced by `xxxxx`. */
export function redactUrl(url: string): string {
  const m = AUTHORITY.exec(url);
  const at = m ? m[2]!.lastIndexOf('@') : -1;
  if (!m || at < 0) return url;
  const userinfo = m[2]!.slice(0, at);
  const colon = userinfo.indexOf(':');
  if (colon < 0) return url;
  return `${m[1]}${userinfo.slice(0, colon)}:${REDACTED}${url.slice(m[1]!.length + at)}`;
}

/**
 * Whether a request header carries a credential. Authorization, Proxy-Authorization and cookies
 * do, and so does any header whose name speaks of auth, a token, a key, a secret, a password or a
 * credential (`X-Api-Key`, `X-Auth-Token`). The tenant header X-Scope-OrgID does not: it names a
 * tenant, and the reference shows it as a metric label.
 */
export function isSecretHeader(name: string): boolean {
  return /auth|token|key|secret|passw|credential|cookie|session/i.test(name);
}

/** The values of the secret headers among `headers`. */
export function secretHeaderValues(headers: Readonly<Record<string, string>>): string[] {
  return Object.entries(headers)
    .filter(([name]) => isSecretHeader(name))
    .map(([, value]) => value);
}

/** A copy of `headers` with the values of secret ones redacted. */
export function redactHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, isSecretHeader(name) ? REDACTED : value]));
}

/**
 * `text` with every occurrence of each secret (and of its percent-encoded form) replaced, and the
 * password of every URL in it hidden. For messages that may quote a request or a server's answer.
 */
export function redactText(text: string, secrets: Iterable<string>): string {
  let out = text.replace(/([A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#@:"']*):[^\s/?#@"']*@/g, `$1:${REDACTED}@`);
  const forms = new Set<string>();
  for (const secret of secrets) {
    for (const form of [secret, encodeURIComponent(secret)]) if (form.length >= MIN_SECRET_LENGTH) forms.add(form);
  }
  // Longest first, so a secret containing another is hidden whole.
  for (const form of [...forms].sort((a, b) => b.length - a.length)) out = out.split(form).join(REDACTED);
  return out;
}

/** Percent-decoding that keeps text it cannot decode, as written. */
function unescape(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
