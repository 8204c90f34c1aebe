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

const MESSAGE_BYTES = 1024;

/** Pushes with the runtime's `fetch` (connection pooling and keep-alive included). */
export const fetchTransport: PushTransport = async (request, signal) => {
  try {
    const response = await fetch(request.url, {
      method: 'POST',
      headers: request.headers,
      body: request.body as Uint8Array<ArrayBuffer>,
      signal,
    });
    const text = await response.text();
    const retryAfter = response.headers.get('retry-after');
    return { status: response.status, ...(retryAfter !== null ? { retryAfter } : {}), message: text.slice(0, MESSAGE_BYTES).trim() };
  } catch (err) {
    const e = err as Error & { cause?: Error };
    return { status: -1, message: e.cause?.message ?? e.message };
  }
};
