import { describe, expect, it } from 'vitest';
import { ConfigErrors } from '../../../lib/config/errors.js';
import { resolveHttpConfig, sameHttpConfig } from '../../../receivers/http/schema.js';
import { profilesReceiveHttpComponent } from '../../../receivers/profiles-receive-http.js';
import { componentArgs, testContext } from '../profiles/harness.js';

const defaults = { listenPort: 8080, connLimit: 16384 };

function httpOf(http: string | undefined) {
  const body = http === undefined ? '' : `  http {\n${http}\n  }\n`;
  const args = componentArgs(`profiles.receive_http "x" {\n${body}  forward_to = []\n}\n`, [], 'http.alloy');
  return resolveHttpConfig(args.values.http as Record<string, unknown> | undefined, defaults, args.block, args.path);
}

function errorsOf(http: string): string[] {
  try {
    httpOf(http);
  } catch (err) {
    if (err instanceof ConfigErrors) return err.errors.map((e) => e.message);
    throw err;
  }
  return [];
}

describe('the http block', () => {
  it('uses the component defaults when the block is absent', () => {
    expect(httpOf(undefined)).toEqual({
      listenAddress: '',
      listenPort: 8080,
      connLimit: 16384,
      readTimeoutMs: 30_000,
      writeTimeoutMs: 30_000,
      idleTimeoutMs: 120_000,
      http2: { enabled: false, maxConcurrentStreams: 100, maxReadFrameSize: 0, maxDecoderHeaderTableSize: 4096, idleTimeoutMs: 0 },
    });
  });

  it('keeps the component conn_limit when a written block omits it', () => {
    expect(httpOf('listen_port = 9999')).toMatchObject({ listenPort: 9999, connLimit: 16384 });
  });

  it('takes listen_port as a number or a string', () => {
    expect(httpOf('listen_port = "4040"').listenPort).toBe(4040);
    expect(httpOf('listen_port = 4041').listenPort).toBe(4041);
  });

  it('treats a negative conn_limit as no limit', () => {
    expect(httpOf('conn_limit = -5').connLimit).toBe(0);
  });

  it('reads the timeouts', () => {
    expect(httpOf('server_read_timeout = "1s"\nserver_write_timeout = "2s"\nserver_idle_timeout = "3s"')).toMatchObject({
      readTimeoutMs: 1000,
      writeTimeoutMs: 2000,
      idleTimeoutMs: 3000,
    });
  });

  it('rejects ports that are not port numbers, at the attribute', () => {
    expect(errorsOf('listen_port = "http"')).toEqual([
      'http.alloy:3:1: profiles.receive_http "x" > http: listen_port must be a port number, got "http"',
    ]);
    expect(errorsOf('listen_port = 70000')).toEqual([
      'http.alloy:3:1: profiles.receive_http "x" > http: listen_port 70000 is out of range 0-65535',
    ]);
  });

  it('rejects an HTTP/2 frame size outside the protocol range', () => {
    expect(errorsOf('http2 {\n  max_read_frame_size = 100\n}')).toEqual([
      'http.alloy:4:3: profiles.receive_http "x" > http > http2: max_read_frame_size must be 0 or between 16384 and 16777215',
    ]);
  });

  it('tells same and different configs apart', () => {
    expect(sameHttpConfig(httpOf('listen_port = 1'), httpOf('listen_port = "1"'))).toBe(true);
    expect(sameHttpConfig(httpOf('listen_port = 1'), httpOf('listen_port = 2'))).toBe(false);
  });

  it('makes the component build fail with the same errors', () => {
    expect(() =>
      profilesReceiveHttpComponent.build(
        componentArgs('profiles.receive_http "x" {\n  http {\n    listen_port = "nope"\n  }\n  forward_to = []\n}\n', []),
        testContext('x'),
      ),
    ).toThrow(ConfigErrors);
  });
});
