/**
 * One endpoint's ingest client: a plain HTTP POST of the profile body. Unlike `fetch`, Node's
 * request keeps repeated `Content-Type` values as separate header lines, which the ingest path
 * must pass on as they came.
 *
 * Headers: the endpoint's, then the agent id (`X-Alloy-Id`), then the incoming content types,
 * then the credentials. No User-Agent is set: the reference sends its HTTP library's default here
 * (Go's `Go-http-client/1.1`), not its agent string, and the default of Node's library is none.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { RemoteStatusError } from '../../lib/pyroscope/remote-status-error.js';
import { WrappedError } from '../../lib/go/error-chain.js';
import { redactText } from '../../lib/redact.js';
import { authorizationHeader } from './auth.js';
import { AGENT_ID_HEADER, type EndpointConfig } from './config.js';

/** How much of an error body is kept for the message. */
const ERROR_BODY_LIMIT = 2048;

/** Go's client gives up when it is sent an 11th time. */
const MAX_REDIRECTS = 10;

/** Endpoint headers Go's client drops on a redirect to another host (credentials go on anyway). */
const HOST_BOUND_HEADERS = new Set(['authorization', 'www-authenticate', 'cookie', 'cookie2']);

/** One request's answer: the status and, for a redirect, its Location. */
interface Answer {
  readonly status: number;
  readonly location?: string;
}

export class IngestClient {
  private readonly agents = new Map<string, HttpAgent>();

  constructor(
    private readonly endpoint: EndpointConfig,
    private readonly agentId: string,
  ) {}

  /**
   * One attempt. Rejects with `remote error: <RemoteStatusError>` for a non-200 answer and with
   * `do request: …` when no answer came (the abort reason's text when `signal` fired).
   *
   * Redirects are followed as Go's client follows them (with `follow_redirects`, the default):
   * 301/302/303 as a GET without body, 307/308 with the same method and body, each hop with the
   * first request's headers (minus host-bound ones when the host changes), the credentials and a
   * Referer; the 11th redirect fails the attempt. A redirect without Location is the answer.
   */
  async send(url: URL, body: Uint8Array, contentTypes: readonly string[], signal: AbortSignal): Promise<void> {
    const headers: OutgoingHttpHeaders = {};
    const set = (name: string, value: string | string[]) => {
      for (const existing of Object.keys(headers)) if (existing.toLowerCase() === name.toLowerCase()) delete headers[existing];
      headers[name] = value;
    };
    for (const [name, value] of Object.entries(this.endpoint.headers)) set(name, value);
    set(AGENT_ID_HEADER, this.agentId);
    if (contentTypes.length > 0) set('Content-Type', [...contentTypes]);
    // Credentials come from the client's transport in the reference, so every hop gets them.
    const authorization = authorizationHeader(this.endpoint.auth);
    const secrets = authorization === undefined ? this.endpoint.secrets : [...this.endpoint.secrets, authorization];

    let hop = url;
    let method = 'POST';
    let hopHeaders = headers;
    for (let redirects = 0; ; redirects++) {
      const sent: OutgoingHttpHeaders = { ...hopHeaders };
      if (authorization !== undefined) sent.Authorization = authorization;
      if (method === 'POST') sent['Content-Length'] = String(body.byteLength);
      const answer = await this.exchange(hop, method, sent, method === 'POST' ? body : undefined, secrets, signal);
      if (answer.location === undefined) return;
      const next = new URL(answer.location, hop);
      if (redirects + 1 >= MAX_REDIRECTS) {
        throw new WrappedError(
          'do request',
          new WrappedError(`Post ${JSON.stringify(answer.location)}`, new Error('stopped after 10 redirects')),
        );
      }
      if (answer.status === 301 || answer.status === 302 || answer.status === 303) method = 'GET';
      hopHeaders = { ...headerCopy(headers, url, next) };
      const referer = refererFor(hop, next);
      if (referer !== undefined) hopHeaders.Referer = referer;
      hop = next;
    }
  }

  /**
   * One request. Resolves for a 200 (body drained) and for a redirect to follow (its Location);
   * rejects for any other answer or for no answer.
   */
  private exchange(
    url: URL,
    method: string,
    headers: OutgoingHttpHeaders,
    body: Uint8Array | undefined,
    secrets: readonly string[],
    signal: AbortSignal,
  ): Promise<Answer> {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    // Go names the first request's method and the URL of the hop that failed.
    const describe = (err: unknown) =>
      new WrappedError('do request', new WrappedError(`Post ${JSON.stringify(url.toString())}`, signal.aborted ? signal.reason : err));
    return new Promise<Answer>((resolve, reject) => {
      if (signal.aborted) return reject(describe(signal.reason));
      const req = request(url, { method, agent: this.agentFor(url), headers, signal }, (res) => {
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (status === 200 || (this.endpoint.followRedirects && location && REDIRECTS.has(status))) {
          res.resume();
          res.once('end', () => resolve(status === 200 ? { status } : { status, location: location as string }));
          res.once('error', (err) => reject(status === 200 ? new WrappedError('reading response body', err) : describe(err)));
          return;
        }
        readHead(res).then(
          // The server's answer may quote the request back, credentials included.
          (text) => reject(new WrappedError('remote error', new RemoteStatusError(status, redactText(text, secrets)))),
          (err) => reject(describe(err)),
        );
      });
      req.once('error', (err) => reject(describe(err)));
      req.end(body);
    });
  }

  /** A keep-alive agent per scheme (a redirect may change it). */
  private agentFor(url: URL): HttpAgent {
    let agent = this.agents.get(url.protocol);
    if (agent === undefined) {
      agent = url.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
      this.agents.set(url.protocol, agent);
    }
    return agent;
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * The first request's headers for the next hop: all of them, except the host-bound ones when the
 * next host name is neither the first request's nor a subdomain of it (Go compares names without
 * ports, and against the first request, not the previous hop).
 */
function headerCopy(first: OutgoingHttpHeaders, initial: URL, next: URL): OutgoingHttpHeaders {
  const sameSite = next.hostname === initial.hostname || next.hostname.endsWith(`.${initial.hostname}`);
  if (sameSite) return first;
  return Object.fromEntries(Object.entries(first).filter(([name]) => !HOST_BOUND_HEADERS.has(name.toLowerCase())));
}

/** Go's Referer for a redirect: the previous URL without credentials or fragment, none from https to http. */
function refererFor(previous: URL, next: URL): string | undefined {
  if (previous.protocol === 'https:' && next.protocol === 'http:') return undefined;
  const referer = new URL(previous);
  referer.username = '';
  referer.password = '';
  referer.hash = '';
  return referer.toString();
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
