/**
 * Pipelined JetStream publishing: many messages in flight on one connection, each resolved by its
 * own publish acknowledgement. One wildcard reply subscription and one sweep timer serve every
 * publish (a request per message, each with its own timer, costs several times more CPU).
 *
 * A message carries `Nats-Msg-Id`, so publishing it again after a lost acknowledgement is stored
 * once: the stream's duplicate window drops the repeat and acknowledges it as a duplicate.
 */
import { createInbox, headers, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';

/** Why a publish was not acknowledged. */
export type PublishFailure = 'timeout' | 'no_stream' | 'rejected' | 'closed';

export class PublishError extends Error {
  constructor(
    message: string,
    readonly reason: PublishFailure,
  ) {
    super(message);
    this.name = 'PublishError';
  }
}

/** A JetStream publish acknowledgement. */
export interface PubAck {
  readonly stream: string;
  readonly seq: number;
  readonly duplicate: boolean;
}

interface Pending {
  readonly resolve: (ack: PubAck) => void;
  readonly reject: (err: PublishError) => void;
  readonly deadline: number;
  readonly subject: string;
}

export class AsyncPublisher {
  private readonly inbox = createInbox();
  private readonly pending = new Map<string, Pending>();
  private readonly subscription: Subscription;
  private readonly sweep: NodeJS.Timeout;
  private next = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs: number,
  ) {
    this.subscription = nc.subscribe(`${this.inbox}.*`, { callback: (err, msg) => (err ? undefined : this.onReply(msg)) });
    this.sweep = setInterval(() => this.expire(), Math.max(10, Math.min(250, timeoutMs / 4)));
    this.sweep.unref();
  }

  /** Messages published and not yet acknowledged or failed. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Publishes one message; resolves with its acknowledgement. */
  publish(subject: string, data: Uint8Array, msgId: string): Promise<PubAck> {
    if (this.nc.isClosed()) return Promise.reject(new PublishError('the connection is closed', 'closed'));
    const token = (this.next++).toString(36);
    const hdrs = headers();
    hdrs.set('Nats-Msg-Id', msgId);
    return new Promise<PubAck>((resolve, reject) => {
      this.pending.set(token, { resolve, reject, deadline: performance.now() + this.timeoutMs, subject });
      try {
        this.nc.publish(subject, data, { reply: `${this.inbox}.${token}`, headers: hdrs });
      } catch (err) {
        this.pending.delete(token);
        reject(new PublishError((err as Error).message, 'rejected'));
      }
    });
  }

  /** Fails everything in flight and stops listening for acknowledgements. */
  close(): void {
    clearInterval(this.sweep);
    this.subscription.unsubscribe();
    for (const [token, p] of this.pending) {
      this.pending.delete(token);
      p.reject(new PublishError('the publisher is closed', 'closed'));
    }
  }

  private onReply(msg: Msg): void {
    const token = msg.subject.slice(this.inbox.length + 1);
    const p = this.pending.get(token);
    if (!p) return; // Already timed out: the retry carries the same message id.
    this.pending.delete(token);
    if (msg.headers?.hasError) {
      const code = msg.headers.code;
      if (code === 503) p.reject(new PublishError(`no JetStream stream listens on ${p.subject}`, 'no_stream'));
      else p.reject(new PublishError(`server answered ${code} ${msg.headers.description}`, 'rejected'));
      return;
    }
    let reply: { stream?: string; seq?: number; duplicate?: boolean; error?: { code?: number; description?: string } };
    try {
      reply = JSON.parse(new TextDecoder().decode(msg.data)) as typeof reply;
    } catch {
      p.reject(new PublishError('unreadable publish acknowledgement', 'rejected'));
      return;
    }
    if (reply.error) {
      p.reject(new PublishError(`JetStream refused the message: ${reply.error.description ?? `error ${reply.error.code}`}`, 'rejected'));
      return;
    }
    p.resolve({ stream: reply.stream ?? '', seq: reply.seq ?? 0, duplicate: reply.duplicate === true });
  }

  private expire(): void {
    const now = performance.now();
    for (const [token, p] of this.pending) {
      if (p.deadline > now) continue;
      this.pending.delete(token);
      p.reject(new PublishError(`no acknowledgement within ${this.timeoutMs}ms`, 'timeout'));
    }
  }
}
