/**
 * A self-signed certificate for 127.0.0.1 (P-256, valid one day), written by openssl into `dir` as
 * `key.pem` and `cert.pem`, for tests that serve TLS on the loopback address.
 */
import { execFileSync } from 'node:child_process';

export function writeSelfSignedCert(dir: string): void {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'key.pem',
      '-out',
      'cert.pem',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { cwd: dir, stdio: 'pipe' },
  );
}
