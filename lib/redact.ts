/**
 * Keeping credentials out of everything a component shows: log lines, error messages, metric
 * labels, health messages. Every component that is given a secret (a password, a token, a secret
 * header, credentials in a URL) sends what it shows through these functions.
 *
 * URL credentials follow Go's HTTP client, as the reference does: a URL's userinfo is not sent
 * in the URL but as `Authorization: Basic …` (user and password percent-decoded), unless the
 * request already carries an Authorization header.
 *
 * Where a URL is shown, every credential it can carry reads `xxxxx`: the password of its userinfo
 * (as Go's `URL.Redacted`), a userinfo that is a name alone (NATS takes `nats://TOKEN@host` as a
 * token, and an HTTP client sends the name as a Basic credential, so it is hidden whole, unlike
 * Go), and the value of each query or fragment parameter named like a credential (`token`,
 * `password`, `access_token`, `api_key`, `secret`, `sig`, `X-Amz-Signature`, …).
 *
 * @example
 * redactUrl('http://ops:s3cret@loki:3100/push') // 'http://ops:xxxxx@loki:3100/push'
 * redactUrl('nats://s3cret@nats:4222') // 'nats://xxxxx@nats:4222'
 * redactUrl('https://h/push?tenant=a&access_token=s3cret') // 'https://h/push?tenant=a&access_token=xxxxx'
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

/** The URL with every credential in it hidden: its userinfo's password (or the userinfo itself when it is a name alone) and secret parameters. */
export function redactUrl(url: string): string {
  const m = AUTHORITY.exec(url);
  const at = m ? m[2]!.lastIndexOf('@') : -1;
  if (!m || at < 0) return redactParameters(url);
  const userinfo = m[2]!.slice(0, at);
  const colon = userinfo.indexOf(':');
  const shown = colon < 0 ? REDACTED : `${userinfo.slice(0, colon)}:${REDACTED}`;
  return `${m[1]}${shown}${redactParameters(url.slice(m[1]!.length + at))}`;
}

/**
 * A `name=value` parameter after `?`, `&`, `;` or `#` (query and fragment alike: OAuth puts an
 * `access_token` in the fragment); the name is checked by `isSecretParameter`.
 */
const PARAMETER = /([?&;#])([^=&;#?\s"'<>]{1,100})=([^&;#\s"'<>]*)/g;

/** Whether a URL parameter carries a credential: named as a secret header would be, or `pass`, `pwd`, `sig` or a signature. */
export function isSecretParameter(name: string): boolean {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name);
  } catch {
    // Shown as written.
  }
  return isSecretHeader(decoded) || /^(pass|pwd|sig)$|signature/i.test(decoded);
}

/** `text` with the value of every secret URL parameter in it hidden. */
function redactParameters(text: string): string {
  return text.replace(PARAMETER, (whole, lead: string, name: string, value: string) =>
    value !== '' && isSecretParameter(name) ? `${lead}${name}=${REDACTED}` : whole,
  );
}

/**
 * A URL in free text: a scheme, `://`, then anything up to white space, a quote or an angle
 * bracket. A comma followed by another scheme starts another URL (NATS server lists).
 */
const URL_IN_TEXT = /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s"'<>`]*/g;
const NEXT_URL = /,(?=[A-Za-z][A-Za-z0-9+.-]*:\/\/)/;

/**
 * The credentials in the URLs of `text`, as written: each userinfo password (or a userinfo that
 * is a name alone) and each secret parameter's value. Other text may quote them without the URL.
 */
export function urlCredentials(text: string): string[] {
  const found: string[] = [];
  for (const url of text.match(URL_IN_TEXT) ?? []) {
    for (const one of url.split(NEXT_URL)) {
      const m = AUTHORITY.exec(one);
      const at = m ? m[2]!.lastIndexOf('@') : -1;
      if (m && at >= 0) {
        const userinfo = m[2]!.slice(0, at);
        const colon = userinfo.indexOf(':');
        found.push(colon < 0 ? userinfo : userinfo.slice(colon + 1));
      }
    }
  }
  for (const [, , name, value] of text.matchAll(PARAMETER)) if (value !== '' && isSecretParameter(name!)) found.push(value!);
  return found.filter((secret) => secret !== '').flatMap((secret) => [secret, unescape(secret)]);
}

/** `text` with every credential of every URL in it hidden, as `redactUrl` hides them. */
export function redactUrlsIn(text: string): string {
  if (!text.includes('://')) return redactParameters(text);
  return redactParameters(text.replace(URL_IN_TEXT, (found) => found.split(NEXT_URL).map(redactUrl).join(',')));
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

/**
 * `text` with every occurrence of each secret (and of its percent-encoded form) replaced, and the
 * credentials of every URL in it hidden. For messages that may quote a request or a server's answer.
 */
export function redactText(text: string, secrets: Iterable<string>): string {
  let out = redactUrlsIn(text);
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
