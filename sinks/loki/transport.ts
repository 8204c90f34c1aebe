/**
 * One push request to an endpoint. The writer's retry logic only needs the status (or that the
 * request never got one) and the `Retry-After` header, so transports are swappable in tests.
 */

export interface PushRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export interface PushResult {
  /** The HTTP status, or -1 when no response arrived (connection refused, reset, timeout). */
  readonly status: number;
  readonly retryAfter?: string;
  /** The response body (first KiB) or the network error, for logs. */
  readonly message: string;
}

export type PushTransport = (request: PushRequest, signal: AbortSignal) => Promise<PushResult>;
