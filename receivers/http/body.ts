/**
 * Reads a request body completely, with no size limit and no decoding: the bytes arrive exactly
 * as the client sent them (a `Content-Encoding` is not undone). Fails when the client goes away
 * mid-body or the server's read timeout passes first.
 */
import { onReadTimeout, readTimeoutError, type HttpRequest } from './server.js';

export function readBody(req: HttpRequest): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => new BodyReader(req, resolve, reject));
}

/**
 * One read in progress. Its listeners are bound prototype methods rather than closures: this runs
 * once per request, and per-call closures cost noticeably more here.
 */
class BodyReader {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private done = false;
  private readonly stopWatching: () => void;
  private readonly onData = this.data.bind(this);
  private readonly onEnd = this.end.bind(this);
  private readonly onError = this.fail.bind(this);
  private readonly onCutShort = this.cutShort.bind(this);

  constructor(
    private readonly req: HttpRequest,
    private readonly resolve: (body: Buffer) => void,
    private readonly reject: (err: Error) => void,
  ) {
    // Plain `on` rather than `once` (which wraps each listener): settle() detaches them all.
    req.on('data', this.onData);
    req.on('end', this.onEnd);
    req.on('error', this.onError);
    req.on('aborted', this.onCutShort);
    req.on('close', this.onCutShort);
    this.stopWatching = onReadTimeout(req, this.timedOut.bind(this));
  }

  private data(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  private end(): void {
    if (this.settle()) this.resolve(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size));
  }

  private fail(err: Error): void {
    if (!this.settle()) return;
    // Stop reading what is left; the answer goes out regardless.
    this.req.pause();
    this.reject(err);
  }

  private cutShort(): void {
    this.fail(new Error('unexpected EOF'));
  }

  private timedOut(): void {
    this.fail(readTimeoutError());
  }

  /** Detaches every listener; false when the read had already ended. */
  private settle(): boolean {
    if (this.done) return false;
    this.done = true;
    const req = this.req;
    req.off('data', this.onData);
    req.off('end', this.onEnd);
    req.off('error', this.onError);
    req.off('aborted', this.onCutShort);
    req.off('close', this.onCutShort);
    // Set in the constructor after the listeners; a timeout that already passed fires first.
    this.stopWatching?.();
    return true;
  }
}
