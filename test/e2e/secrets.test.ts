/**
 * No credential given to any component shows anywhere: `rivulet run` with a distinctive secret in
 * every secret field of every component (URL credentials, basic_auth, bearer tokens,
 * authorization credentials, secret headers, TLS keys), its sinks failing against an endpoint
 * that answers 500 and then 401, with debug logging on. Nothing it prints, serves on /metrics or
 * /api/v0/components, or answers its clients holds a secret, while the endpoint receives the
 * right credentials.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create, toBinary } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushRequestSchema } from '../../lib/pyroscope/gen/push/v1/push_pb.js';
import { spawnRun, type ChildRun } from './support.js';
import { writeSelfSignedCert } from '../support/self-signed.js';

/** Every secret the config holds, as written there, and any other form it could leak in. */
const SECRETS = {
  logsUrlPassword: 'lwUrlPass%2Fz9Q',
  logsBasicPassword: 'lwBasicPass7Xk',
  logsBearer: 'lwBearerTok3Jm',
  logsHeader: 'lwHeaderKey5Rt',
  profilesUrlPassword: 'pwUrlPass8Hq',
  profilesBasicPassword: 'pwBasicPass2Wd',
  profilesBearer: 'pwBearerTok6Lp',
  profilesCredentials: 'pwCredentials4Zs',
  profilesHeader: 'pwHeaderSecret1Nv',
};

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** The Authorization each endpoint must receive, by the path prefix its URL gives it. */
const EXPECTED_AUTHORIZATION: Record<string, string> = {
  lw1: basic('lw-user', 'lwUrlPass/z9Q'),
  lw2: basic('lw-basic', SECRETS.logsBasicPassword),
  lw3: `Bearer ${SECRETS.logsBearer}`,
  pw1: basic('pw-user', SECRETS.profilesUrlPassword),
  pw2: basic('pw-basic', SECRETS.profilesBasicPassword),
  pw3: `Bearer ${SECRETS.profilesBearer}`,
  pw4: `Bearer ${SECRETS.profilesCredentials}`,
};

interface Received {
  readonly prefix: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
}

/** Answers each endpoint's first request 500 and every later one 401, recording what came. */
function startFailingEndpoint(): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const seen = new Map<string, number>();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '';
      const prefix = path.split('/')[1] ?? '';
      received.push({ prefix, path, headers: req.headers });
      const n = (seen.get(path) ?? 0) + 1;
      seen.set(path, n);
      res.writeHead(n === 1 ? 500 : 401, { 'Content-Type': 'text/plain' });
      // An endpoint may quote the request's credentials back: they must not be shown either.
      res.end(n === 1 ? 'upstream failure\n' : `not allowed: ${req.headers.authorization} ${req.headers['x-api-key'] ?? ''}\n`);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received })),
  );
}

let dir: string;
let certPem: string;
let keyPem: string;
let endpoint: Awaited<ReturnType<typeof startFailingEndpoint>>;
let run: ChildRun | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rivulet-secrets-'));
  writeSelfSignedCert(dir);
  certPem = readFileSync(join(dir, 'cert.pem'), 'utf8');
  keyPem = readFileSync(join(dir, 'key.pem'), 'utf8');
  endpoint = await startFailingEndpoint();
});

afterAll(async () => {
  if (run && run.child.exitCode === null && run.child.signalCode === null) {
    run.child.kill('SIGKILL');
    await run.exited;
  }
  await new Promise((resolve) => endpoint?.server.close(resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function config(): string {
  const at = (prefix: string, user = '', password = '') =>
    JSON.stringify(endpoint.url.replace('http://', `http://${user === '' ? '' : `${user}:${password}@`}`) + `/${prefix}`);
  const tls = `tls {\n      cert_pem = ${JSON.stringify(certPem)}\n      key_pem = ${JSON.stringify(keyPem)}\n    }`;
  const retries = `
    min_backoff_period = "10ms"
    max_backoff_period = "20ms"
    max_backoff_retries = 3`;
  return `
logs.source.api "in" {
  http {
    listen_address = "127.0.0.1"
    listen_port = 0
    ${tls}
  }
  forward_to = [logs.write.out.receiver]
}

logs.write "out" {
  endpoint {
    url = ${at('lw1/loki/api/v1/push', 'lw-user', SECRETS.logsUrlPassword)}
    headers = { "X-Api-Key" = ${JSON.stringify(SECRETS.logsHeader)} }
    batch_wait = "10ms"${retries}
  }
  endpoint {
    url = ${at('lw2/loki/api/v1/push')}
    basic_auth {
      username = "lw-basic"
      password = ${JSON.stringify(SECRETS.logsBasicPassword)}
    }
    batch_wait = "10ms"${retries}
  }
  endpoint {
    url = ${at('lw3/loki/api/v1/push')}
    bearer_token = ${JSON.stringify(SECRETS.logsBearer)}
    batch_wait = "10ms"${retries}
  }
}

profiles.receive_http "in" {
  http {
    listen_address = "127.0.0.1"
    listen_port = 0
    ${tls}
  }
  forward_to = [profiles.write.out.receiver]
}

profiles.write "out" {
  endpoint {
    url = ${at('pw1', 'pw-user', SECRETS.profilesUrlPassword)}
    headers = { "X-Auth-Token" = ${JSON.stringify(SECRETS.profilesHeader)} }${retries}
  }
  endpoint {
    url = ${at('pw2')}
    basic_auth {
      username = "pw-basic"
      password = ${JSON.stringify(SECRETS.profilesBasicPassword)}
    }${retries}
  }
  endpoint {
    url = ${at('pw3')}
    bearer_token = ${JSON.stringify(SECRETS.profilesBearer)}${retries}
  }
  endpoint {
    url = ${at('pw4')}
    authorization {
      type = "Bearer"
      credentials = ${JSON.stringify(SECRETS.profilesCredentials)}
    }${retries}
  }
}
`;
}

/** One HTTPS request trusting the test certificate; resolves with the whole answer as text. */
function httpsPost(url: string, headers: Record<string, string>, body: Uint8Array | string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method: 'POST', headers, ca: certPem, agent: false }, (res) => {
      let text = JSON.stringify(res.headers);
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function until(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('secrets', () => {
  it('never show in logs, errors, /metrics, /api/v0/components or answers, and still reach the endpoint', async () => {
    const file = join(dir, 'secrets.alloy');
    writeFileSync(file, config());
    run = await spawnRun(file, ['logs.source.api.in', 'profiles.receive_http.in'], 60_000, { ...process.env, RIVULET_DEBUG: '1' });
    const logsUrl = run.apiUrls.get('logs.source.api.in')!;
    const profilesUrl = run.apiUrls.get('profiles.receive_http.in')!;
    const answers: string[] = [];

    const pushed = await httpsPost(
      `${logsUrl}/loki/api/v1/push`,
      { 'Content-Type': 'application/json' },
      JSON.stringify({ streams: [{ stream: { app: 'secrets' }, values: [[String(Date.now() * 1_000_000), 'hello']] }] }),
    );
    answers.push(pushed.text);
    expect(pushed.status).toBe(204);

    const push = toBinary(
      PushRequestSchema,
      create(PushRequestSchema, {
        series: [{ labels: [{ name: 'service_name', value: 'app' }], samples: [{ rawProfile: Buffer.from('profile') }] }],
      }),
    );
    const pushAnswer = await httpsPost(
      `${profilesUrl}/push.v1.PusherService/Push`,
      { 'Content-Type': 'application/proto', 'Connect-Protocol-Version': '1' },
      push,
    );
    answers.push(pushAnswer.text);
    expect(pushAnswer.status).toBe(500);
    // The error names each endpoint, its password hidden.
    expect(pushAnswer.text).toContain(`failed to push to endpoint http://pw-user:xxxxx@${new URL(endpoint.url).host}/pw1`);
    const ingestAnswer = await httpsPost(`${profilesUrl}/ingest?name=app`, { 'Content-Type': 'application/octet-stream' }, 'profile');
    answers.push(ingestAnswer.text);
    expect(ingestAnswer.status).toBe(401);

    // Each logs endpoint fails twice (500, then 401 which is final).
    await until(
      () => ['lw1', 'lw2', 'lw3'].every((p) => endpoint.received.filter((r) => r.prefix === p).length >= 2),
      'the logs endpoints',
    );
    await until(() => (run!.stderr().match(/final error sending batch/g) ?? []).length >= 3, 'the final errors of logs.write');

    const metrics = await (await fetch(`${run.runUrl}/metrics`)).text();
    const components = await (await fetch(`${run.runUrl}/api/v0/components`)).text();
    expect(metrics).toContain(`endpoint="http://pw-user:xxxxx@${new URL(endpoint.url).host}/pw1"`);
    expect(JSON.parse(components)).toHaveLength(4);

    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);

    // The endpoint got the credentials, in the request and not in its URL.
    for (const r of endpoint.received) {
      expect([r.prefix, r.headers.authorization]).toEqual([r.prefix, EXPECTED_AUTHORIZATION[r.prefix]]);
      expect(r.path).not.toContain('@');
    }
    expect(endpoint.received.filter((r) => r.prefix === 'lw1').every((r) => r.headers['x-api-key'] === SECRETS.logsHeader)).toBe(true);
    expect(endpoint.received.filter((r) => r.prefix === 'pw1').every((r) => r.headers['x-auth-token'] === SECRETS.profilesHeader)).toBe(
      true,
    );
    expect(new Set(endpoint.received.map((r) => r.prefix))).toEqual(new Set(Object.keys(EXPECTED_AUTHORIZATION)));

    const shown = [run.stderr(), run.stdout(), metrics, components, ...answers].join('\n');
    expect(shown).toContain('final error sending batch');
    expect(shown).toContain('failed to push to endpoint');
    const keyBody = keyPem.split('\n').filter((l) => l !== '' && !l.startsWith('-----'));
    const forms = [
      ...Object.values(SECRETS),
      'lwUrlPass/z9Q',
      ...Object.values(EXPECTED_AUTHORIZATION).map((a) => a.replace(/^\S+ /, '')),
      ...keyBody,
    ];
    expect(forms.filter((secret) => shown.includes(secret))).toEqual([]);
  }, 120_000);

  it('in a NATS URL, a bare token or a password, never show in logs, /metrics or /api/v0/components', async () => {
    const token = 'natsTok9Vq2';
    const password = 'natsPass4Lm';
    const file = join(dir, 'nats.alloy');
    writeFileSync(
      file,
      `logs.source.jetstream "in" {
  url        = "nats://${token}@127.0.0.1:1,nats://ops:${password}@127.0.0.1:2"
  stream     = "LOGS"
  group      = "g"
  forward_to = []
}
`,
    );
    const nats = await spawnRun(file, [], 60_000, { ...process.env, RIVULET_DEBUG: '1' });
    try {
      // No server answers there: the source logs its failing attempts.
      await until(() => nats.stderr().includes('component="logs.source.jetstream.in"'), 'the source to log');
      const components = await (await fetch(`${nats.runUrl}/api/v0/components`)).text();
      const metrics = await (await fetch(`${nats.runUrl}/metrics`)).text();
      expect((JSON.parse(components) as Array<{ arguments: { url: string } }>)[0]!.arguments.url).toBe(
        'nats://xxxxx@127.0.0.1:1,nats://ops:xxxxx@127.0.0.1:2',
      );
      // What a stop would log adds nothing here; killing it keeps the test off the source's retries.
      nats.child.kill('SIGKILL');
      await nats.exited;
      const shown = [nats.stderr(), nats.stdout(), components, metrics].join('\n');
      expect([token, password].filter((secret) => shown.includes(secret))).toEqual([]);
    } finally {
      if (nats.child.exitCode === null && nats.child.signalCode === null) nats.child.kill('SIGKILL');
    }
  }, 60_000);
});
