import { describe, expect, it } from 'vitest';
import type { Block } from '../../../lib/config/ast.js';
import { parseConfig } from '../../../lib/config/parser.js';
import { errorsOf } from '../../support/graph-harness.js';
import { decodeBlock, runChecks } from '../../../lib/config/schema.js';
import {
  natsConnectionFields,
  natsConnectionSettings,
  natsTlsBlockSpec,
  takesTermReasons,
  type NatsConnectionValues,
} from '../../../lib/jetstream/connection.js';

const spec = { fields: natsConnectionFields, blocks: { tls: natsTlsBlockSpec } };
const path = ['nats.client "c"'];

/** The connection of the block in `text` (`c.alloy`), for the component `nats.client.c`. */
function connectionOf(text: string) {
  const block = parseConfig(text, 'c.alloy').body[0] as Block;
  const { values } = decodeBlock(block, spec, { env: () => undefined, resolve: () => undefined }, path);
  // As a component's validation runs it: every problem thrown at once, placed in the block.
  return runChecks(block, path, (checks) => natsConnectionSettings(values as NatsConnectionValues, 'nats.client.c', checks));
}

describe('natsConnectionSettings', () => {
  it('names the connection after the component id unless name is set', () => {
    expect(connectionOf('nats.client "c" {\n  url = "nats://a:4222"\n}').name).toBe('nats.client.c');
    const named = connectionOf('nats.client "c" {\n  url = "nats://a:4222"\n  name = "ingest"\n}');
    expect([named.name, named.options.name]).toEqual(['ingest', 'ingest']);
  });

  it('reports every problem at once, those of the tls block at its attributes under its path', () => {
    const text = [
      'nats.client "c" {',
      '  url = "nats://a:4222, http://bob:pw@b:80"',
      '  token = "t"',
      '  creds_file = "/nonexistent/user.creds"',
      '  tls {',
      '    server_name = "a"',
      '    cert_file = "/nonexistent/cert.pem"',
      '  }',
      '}',
    ].join('\n');
    expect(errorsOf(() => connectionOf(text))).toEqual([
      'c.alloy:2:3: nats.client "c": url must use nats:// or tls://, got "http://b:80"',
      'c.alloy:3:3: nats.client "c": at most one of token, user/password and creds_file may be set',
      'c.alloy:4:3: nats.client "c": reading creds_file: ENOENT (/nonexistent/user.creds)',
      'c.alloy:7:5: nats.client "c" > tls: reading cert_file: ENOENT (/nonexistent/cert.pem)',
      'c.alloy:7:5: nats.client "c" > tls: cert_file and key_file go together',
    ]);
  });

  it('shows no secret in what it shows, yet a changed secret changes the fingerprint', () => {
    const text = (password: string) =>
      `nats.client "c" {\n  url = "nats://alice:s3cret@a:4222"\n  user = "bob"\n  password = "${password}"\n}`;
    const [first, second] = [connectionOf(text('hunter2')), connectionOf(text('hunter3'))];
    expect(first.display).toBe('nats://a:4222');
    expect(first.fingerprint).not.toContain('hunter2');
    expect(first.fingerprint).not.toContain('s3cret');
    expect(first.fingerprint).not.toBe(second.fingerprint);
  });
});

describe('takesTermReasons', () => {
  it('is true from server 2.10 on, when the server reads a reason after +TERM', () => {
    expect(['2.9.10', '2.10.0', '2.11.3', '3.0.0', '1.12.0', '', undefined].map((v) => takesTermReasons(v))).toEqual([
      false,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });
});
