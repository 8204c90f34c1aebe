import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigErrors } from '../../../lib/config/errors.js';
import { PusherService } from '../../../lib/pyroscope/gen/push/v1/push_pb.js';
import { profilesReceiveHttpComponent } from '../../../receivers/profiles-receive-http.js';
import { componentArgs, recordingReceiver, startReceiveHttp, testContext, type StartedReceiver } from './harness.js';

let dir: string;
const file = (name: string) => join(dir, name);
const pem = (name: string) => readFileSync(file(name), 'utf8');

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A CA, a server certificate for 127.0.0.1, a client certificate from the same CA and one from another CA. */
function generateCertificates(): void {
  for (const ca of ['ca', 'other-ca']) {
    openssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${ca}.key`,
      '-out',
      `${ca}.crt`,
      '-days',
      '1',
      '-subj',
      `/CN=${ca}`,
    );
  }
  writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  writeFileSync(file('client.ext'), 'extendedKeyUsage=clientAuth\n');
  const leaf = (name: string, ca: string, ext: string) => {
    openssl(
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${name}`,
    );
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.crt`,
      '-CAkey',
      `${ca}.key`,
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-extfile',
      ext,
    );
  };
  leaf('server', 'ca', 'server.ext');
  leaf('client', 'ca', 'client.ext');
  leaf('stranger', 'other-ca', 'client.ext');
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rivulet-tls-'));
  generateCertificates();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let running: StartedReceiver[] = [];
afterEach(async () => {
  await Promise.all(running.map((r) => r.stop()));
  running = [];
});

async function serve(tls: string) {
  const receiver = recordingReceiver();
  const started = await startReceiveHttp([receiver], { http: `tls {\n${tls}\n}` });
  running.push(started);
  return { started, receiver };
}

function httpsIngest(url: string, client?: 'client' | 'stranger'): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/ingest?name=tls.app`,
      { method: 'POST', ca: pem('ca.crt'), agent: false, ...(client ? { cert: pem(`${client}.crt`), key: pem(`${client}.key`) } : {}) },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end('profile');
  });
}

const serverFiles = () => `cert_file = ${JSON.stringify(file('server.crt'))}\nkey_file = ${JSON.stringify(file('server.key'))}`;

describe('TLS', () => {
  it('serves HTTPS with the certificate and key files', async () => {
    const { started, receiver } = await serve(serverFiles());
    expect(started.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(await httpsIngest(started.url)).toBe(200);
    expect(receiver.ingests[0]!.labels).toEqual({ __name__: 'tls.app', service_name: 'tls.app' });
    await expect(fetch(started.url.replace('https:', 'http:') + '/ingest', { method: 'POST' })).rejects.toThrow();
  });

  it('serves HTTPS with inline PEM and negotiates HTTP/2 for gRPC', async () => {
    const { started, receiver } = await serve(
      `cert_pem = ${JSON.stringify(pem('server.crt'))}\nkey_pem = ${JSON.stringify(pem('server.key'))}`,
    );
    const client = createClient(PusherService, createGrpcTransport({ baseUrl: started.url, nodeOptions: { ca: pem('ca.crt') } }));
    await client.push({ series: [{ labels: [{ name: 'app', value: 'grpc-tls' }] }] });
    expect(receiver.appends[0]!.labels).toEqual({ app: 'grpc-tls' });
  });

  it('requires a client certificate signed by the client CA when asked to', async () => {
    const { started } = await serve(
      `${serverFiles()}\nclient_auth_type = "RequireAndVerifyClientCert"\nclient_ca_file = ${JSON.stringify(file('ca.crt'))}`,
    );
    expect(await httpsIngest(started.url, 'client')).toBe(200);
    await expect(httpsIngest(started.url)).rejects.toThrow();
    await expect(httpsIngest(started.url, 'stranger')).rejects.toThrow();
  });

  it('accepts any client certificate, but not none, with RequireAnyClientCert', async () => {
    const { started } = await serve(`${serverFiles()}\nclient_auth_type = "RequireAnyClientCert"`);
    expect(await httpsIngest(started.url, 'stranger')).toBe(200);
    await expect(httpsIngest(started.url)).rejects.toThrow();
  });

  it('verifies a client certificate only when one is given with VerifyClientCertIfGiven', async () => {
    const { started } = await serve(
      `${serverFiles()}\nclient_auth_type = "VerifyClientCertIfGiven"\nclient_ca = ${JSON.stringify(pem('ca.crt'))}`,
    );
    expect(await httpsIngest(started.url)).toBe(200);
    expect(await httpsIngest(started.url, 'client')).toBe(200);
    await expect(httpsIngest(started.url, 'stranger')).rejects.toThrow();
  });

  it('stays on plain HTTP for an empty tls block', async () => {
    const { started } = await serve('');
    expect(started.url).toMatch(/^http:/);
  });
});

describe('TLS configuration errors', () => {
  function errorsOf(tls: string): string[] {
    const text = `profiles.receive_http "tls" {\n  http {\n    tls {\n${tls}\n    }\n  }\n  forward_to = []\n}\n`;
    try {
      profilesReceiveHttpComponent.build(componentArgs(text, [], 'tls.alloy'), testContext('profiles.receive_http.tls'));
    } catch (err) {
      if (err instanceof ConfigErrors) return err.errors.map((e) => e.message);
      throw err;
    }
    return [];
  }
  const where = 'profiles.receive_http "tls" > http > tls';

  it('rejects cert_pem together with cert_file', () => {
    expect(
      errorsOf(
        `cert_pem = ${JSON.stringify(pem('server.crt'))}\ncert_file = ${JSON.stringify(file('server.crt'))}\nkey_file = ${JSON.stringify(file('server.key'))}`,
      ),
    ).toEqual([`tls.alloy:5:1: ${where}: cert_pem and cert_file are mutually exclusive`]);
  });

  it('rejects key_pem together with key_file', () => {
    expect(
      errorsOf(
        `cert_file = ${JSON.stringify(file('server.crt'))}\nkey_pem = ${JSON.stringify(pem('server.key'))}\nkey_file = ${JSON.stringify(file('server.key'))}`,
      ),
    ).toEqual([`tls.alloy:6:1: ${where}: key_pem and key_file are mutually exclusive`]);
  });

  it('rejects client authentication without a certificate and key', () => {
    expect(errorsOf('client_auth_type = "RequireAndVerifyClientCert"')).toEqual([
      `tls.alloy:3:5: ${where}: missing one of cert_pem or cert_file`,
      `tls.alloy:3:5: ${where}: missing one of key_pem or key_file`,
    ]);
  });

  it('rejects an unknown client_auth_type and a client CA without a policy', () => {
    expect(errorsOf(`${serverFiles()}\nclient_auth_type = "Sometimes"`)).toEqual([
      `tls.alloy:6:1: ${where}: invalid ClientAuth: Sometimes`,
    ]);
    expect(errorsOf(`${serverFiles()}\nclient_ca_file = ${JSON.stringify(file('ca.crt'))}`)).toEqual([
      `tls.alloy:6:1: ${where}: client CA's have been configured without a Client Auth Policy`,
    ]);
  });

  it('rejects files that cannot be read and keys that do not match', () => {
    const [missing] = errorsOf(`cert_file = ${JSON.stringify(file('nope.crt'))}\nkey_file = ${JSON.stringify(file('server.key'))}`);
    expect(missing).toMatch(new RegExp(`^tls\\.alloy:4:1: ${where}: failed to read cert_file \\(.*nope\\.crt\\): ENOENT`));
    const [mismatch] = errorsOf(`cert_file = ${JSON.stringify(file('server.crt'))}\nkey_file = ${JSON.stringify(file('client.key'))}`);
    expect(mismatch).toMatch(/failed to load X509KeyPair: /);
  });
});
