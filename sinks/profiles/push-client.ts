/**
 * One endpoint's Push client: Connect protocol, binary proto, HTTP/1.1 with keep-alive. Every
 * request carries the endpoint's headers, the agent id (`X-Alloy-Id`, over an endpoint header of
 * that name), its credentials and the writer's User-Agent; the per-call timeout travels as
 * `Connect-Timeout-Ms`.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { ConnectError, createClient, type Client, type Interceptor } from '@connectrpc/connect';
import { compressionGzip, createConnectTransport } from '@connectrpc/connect-node';
import { PusherService, type PushRequest } from '../../lib/pyroscope/gen/push/v1/push_pb.js';
import { redactText } from '../../lib/redact.js';
import { authorizationHeader } from './auth.js';
import { AGENT_ID_HEADER, type EndpointConfig } from './config.js';

export class PushClient {
  private readonly agent: HttpAgent;
  private readonly client: Client<typeof PusherService>;

  constructor(
    private readonly endpoint: EndpointConfig,
    userAgent: string,
    agentId: string,
  ) {
    this.agent = endpoint.url.startsWith('https:') ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    const headers: Interceptor = (next) => async (req) => {
      for (const [name, value] of Object.entries(endpoint.headers)) req.header.set(name, value);
      req.header.set(AGENT_ID_HEADER, agentId);
      const authorization = authorizationHeader(endpoint.auth);
      if (authorization !== undefined) req.header.set('Authorization', authorization);
      req.header.set('User-Agent', userAgent);
      return next(req);
    };
    const transport = createConnectTransport({
      baseUrl: endpoint.requestUrl,
      httpVersion: '1.1',
      useBinaryFormat: true,
      acceptCompression: [compressionGzip],
      interceptors: [headers],
      nodeOptions: { agent: this.agent },
    });
    this.client = createClient(PusherService, transport);
  }

  /** One attempt; rejects with the transport's ConnectError. */
  async push(request: PushRequest, timeoutMs: number, signal: AbortSignal): Promise<void> {
    try {
      await this.client.push(request, { timeoutMs, signal });
    } catch (err) {
      // The server's message may quote the request back, credentials included.
      if (err instanceof ConnectError && err.rawMessage !== '') {
        const rawMessage = redactText(err.rawMessage, this.secrets());
        if (rawMessage !== err.rawMessage) throw new ConnectError(rawMessage, err.code, err.metadata, undefined, err.cause);
      }
      throw err;
    }
  }

  /** The endpoint's credentials, those read from files included. */
  private secrets(): string[] {
    const authorization = authorizationHeader(this.endpoint.auth);
    return authorization === undefined ? [...this.endpoint.secrets] : [...this.endpoint.secrets, authorization];
  }

  close(): void {
    this.agent.destroy();
  }
}
