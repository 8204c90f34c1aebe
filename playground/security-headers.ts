/**
 * Headers on every playground answer. The page runs configs on the user's machine, so no other
 * site may frame it (clickjacking the Run button) and it loads nothing but its own files: script
 * and requests from its own origin only. Styles also allow inline ones, which CodeMirror inserts
 * at run time.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};
