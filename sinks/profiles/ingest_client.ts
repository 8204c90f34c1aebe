/**
 * One endpoint's ingest client: a plain HTTP POST of the profile body. Unlike `fetch`, Node's
 * request keeps repeated `Content-Type` values as separate header lines, which the ingest path
 * must pass on as they came.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { RemoteStatusError, WrappedError } from '../../core/profiles.js';
import { redactText } from '../../lib/redact.js';
import { authorizationHeader } from './auth.js';
import type { EndpointConfig } from './config.js';

/** How much of an error body is kept for the message. */
const ERROR_BODY_LIMIT = 2048;

export class IngestClient {
  private readonly agent: HttpAgent;

  constructor(private readonly endpoint: EndpointConfig) {
    this.agent = endpoint.url.startsWith('https:') ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  }

  /**
   * One attempt. Rejects with `remote error: <RemoteStatusError>` for a non-200 answer and with
   * `do request: …` when no answer came (the abort reason's text when `signal` fired).
   */
  send(url: URL, body: Uint8Array, contentTypes: readonly string[], signal: AbortSignal): Promise<void> {
    const headers: OutgoingHttpHeaders = {};
    const set = (name: string, value: string | string[]) => {
      for (const existing of Object.keys(headers)) if (existing.toLowerCase() === name.toLowerCase()) delete headers[existing];
      headers[name] = value;
    };
    for (const [name, value] of Object.entries(this.endpoint.headers)) set(name, value);
    if (contentTypes.length > 0) set('Content-Type', [...contentTypes]);
    const authorization = authorizationHeader(this.endpoint.auth);
    if (authorization !== undefined) set('Authorization', authorization);
    set('Content-Length', String(body.byteLength));
    const secrets = authorization === undefined ? this.endpoint.secrets : [...this.endpoint.secrets, authorization];

    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const describe = (err: unknown) =>
      new WrappedError('do request', new WrappedError(`Post ${JSON.stringify(url.toString())}`, signal.aborted ? signal.reason : err));
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(describe(signal.reason));
      const req = request(url, { method: 'POST', agent: this.agent, headers, signal }, (res) => {
        if (res.statusCode === 200) {
          res.resume();
          res.once('end', () => resolve());
          res.once('error', (err) => reject(new WrappedError('reading response body', err)));
          return;
        }
        readHead(res).then(
          // The server's answer may quote the request back, credentials included.
          (text) => reject(new WrappedError('remote error', new RemoteStatusError(res.statusCode ?? 0, redactText(text, secrets)))),
          (err) => reject(describe(err)),
        );
      });
      req.once('error', (err) => reject(describe(err)));
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The first bytes of a response body; the rest is drained so the connection stays reusable. */
function readHead(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      if (size < ERROR_BODY_LIMIT) {
        chunks.push(chunk);
        size += chunk.length;
      }
    });
    res.once('end', () => resolve(Buffer.concat(chunks).subarray(0, ERROR_BODY_LIMIT).toString('utf8')));
    res.once('error', reject);
  });
}
