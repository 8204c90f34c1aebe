/**
 * Reads a request body completely, with no decoding: the bytes arrive exactly as the client sent
 * them (a `Content-Encoding` is not undone). Fails when the client goes away mid-body or the
 * server's read timeout passes first.
 *
 * Two optional bounds keep memory in check. `maxBytes` refuses a body larger than it: a declared
 * `Content-Length` over it before a byte is read, a body that grows past it (chunked uploads,
 * HTTP/2) as soon as it does. A `BodyBudget` bounds what every request's body holds together,
 * from its first byte until its response has ended (the body is kept while it is forwarded);
 * a body that does not fit beside the others is refused.
 */
import { onReadTimeout, readTimeoutError, type HttpRequest, type HttpResponse } from './server.js';

/** A body larger than the size limit. */
export class BodyTooLargeError extends Error {
  readonly status = 413;

  constructor(readonly limit: number) {
    super(`request body is larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** Seconds a client whose body did not fit is asked to wait before trying again. */
export const RETRY_AFTER_SECONDS = 1;

/** A body that does not fit beside the bodies other requests hold. */
export class BodyBudgetError extends Error {
  readonly status = 429;

  constructor() {
    super('too many request bytes held at once, retry later');
    this.name = 'BodyBudgetError';
  }
}

/**
 * The bytes held by the bodies of requests in flight, within a bound. A request holding all that
 * is held may always grow, so one body larger than the bound is still served, alone.
 */
export class BodyBudget {
  private held = 0;

  /** `limit` 0 means no bound. */
  constructor(private limit: number) {}

  /** A new bound (config update); what is held stays held. */
  resize(limit: number): void {
    this.limit = limit;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.held;
  }

  /** Takes `bytes` more for a request that holds `mine`; false when they do not fit. */
  take(bytes: number, mine: number): boolean {
    if (this.limit > 0 && this.held !== mine && this.held + bytes > this.limit) return false;
    this.held += bytes;
    return true;
  }

  release(bytes: number): void {
    this.held -= bytes;
  }
}

export interface BodyLimits {
  /** Largest body read; 0 means no limit. */
  readonly maxBytes: number;
  /** Shared with the other requests of the server; released when `res` has ended. */
  readonly budget?: BodyBudget;
}

/** Reads `req`'s body; rejects with BodyTooLargeError or BodyBudgetError when a bound is passed. */
export function readBody(req: HttpRequest, res?: HttpResponse, limits?: BodyLimits): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => new BodyReader(req, resolve, reject, res, limits));
}

/**
 * One read in progress. Its listeners are bound prototype methods rather than closures: this runs
 * once per request, and per-call closures cost noticeably more here.
 */
class BodyReader {
  private chunks: Buffer[] = [];
  private size = 0;
  private done = false;
  /** Bytes taken from the budget, given back when the response has ended. */
  private taken = 0;
  private readonly maxBytes: number;
  private readonly budget: BodyBudget | undefined;
  private readonly stopWatching: () => void;
  private readonly onData = this.data.bind(this);
  private readonly onEnd = this.end.bind(this);
  private readonly onError = this.fail.bind(this);
  private readonly onCutShort = this.cutShort.bind(this);

  constructor(
    private readonly req: HttpRequest,
    private readonly resolve: (body: Buffer) => void,
    private readonly reject: (err: Error) => void,
    private readonly res: HttpResponse | undefined,
    limits: BodyLimits | undefined,
  ) {
    this.maxBytes = limits?.maxBytes ?? 0;
    this.budget = res ? limits?.budget : undefined;
    const refused = this.refuseUpFront();
    if (refused) {
      this.done = true;
      this.stopWatching = () => {};
      req.pause();
      reject(refused);
      return;
    }
    // Plain `on` rather than `once` (which wraps each listener). A read that fails detaches them
    // all; one that ends leaves all but 'data' (see end()).
    req.on('data', this.onData);
    req.on('end', this.onEnd);
    req.on('error', this.onError);
    req.on('aborted', this.onCutShort);
    req.on('close', this.onCutShort);
    this.stopWatching = onReadTimeout(req, this.timedOut.bind(this));
  }

  /** A declared length over the limit, or one the budget cannot hold, is refused unread. */
  private refuseUpFront(): Error | undefined {
    const header = this.req.headers['content-length'];
    if (header === undefined || (this.maxBytes === 0 && !this.budget)) return undefined;
    const declared = Number(header);
    if (!Number.isSafeInteger(declared) || declared < 0) return undefined;
    if (this.maxBytes > 0 && declared > this.maxBytes) return new BodyTooLargeError(this.maxBytes);
    // Taking the whole declared length at once keeps two large uploads from both starting and
    // then both failing halfway.
    if (declared > 0 && !this.grow(declared)) return new BodyBudgetError();
    return undefined;
  }

  private data(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.maxBytes > 0 && this.size > this.maxBytes) return this.fail(new BodyTooLargeError(this.maxBytes));
    if (this.budget && this.size > this.taken && !this.grow(this.size - this.taken)) return this.fail(new BodyBudgetError());
    this.chunks.push(chunk);
  }

  /** Takes `bytes` more from the budget, giving everything back once the response has ended. */
  private grow(bytes: number): boolean {
    const budget = this.budget!;
    if (!budget.take(bytes, this.taken)) return false;
    // `on`, not `once`: a response closes once, and the wrapper `once` adds is one more object.
    if (this.taken === 0) this.res!.on('close', () => budget.release(this.taken));
    this.taken += bytes;
    return true;
  }

  /**
   * The body has arrived. Only the 'data' listener is detached: nothing more comes after 'end',
   * and the 'close' and any 'error' that follow find the read done. Node's HTTP server removes
   * whatever 'data' listener is left once the response has ended, and that removal deletes a
   * property of the request's listener table, which turns it into a slow dictionary; detaching
   * it here only clears the slot. Detaching the other four costs more than leaving them.
   */
  private end(): void {
    if (this.done) return;
    this.done = true;
    this.req.off('data', this.onData);
    this.stopWatching?.();
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    // The listeners keep this reader as long as the request lives: it must not keep the chunks too.
    this.chunks = [];
    this.resolve(body);
  }

  private fail(err: Error): void {
    if (!this.settle()) return;
    this.chunks.length = 0;
    // Stop reading what is left; the answer goes out regardless.
    this.req.pause();
    this.reject(err);
  }

  /** 'aborted' or 'close': the request went away before its end, unless the read is over (see end()). */
  private cutShort(): void {
    // Checked before the error is made: 'close' follows every request that ended well.
    if (!this.done) this.fail(new Error('unexpected EOF'));
  }

  private timedOut(): void {
    if (!this.done) this.fail(readTimeoutError());
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
