/**
 * Reads a request body up to a size limit. A declared `Content-Length` over the limit is refused
 * before a byte is read; a body that grows past it while streaming (chunked uploads) is refused
 * as soon as it does, so a huge upload never sits in memory.
 */
import { readDeadline, type HttpRequest } from '../http/server.js';
import { PushError } from './decoded-push.js';

/**
 * `admit` is asked about every chunk before it is kept; an error it returns ends the read with
 * that error (the bound on what all requests hold together).
 */
export function readBodyCapped(
  req: HttpRequest,
  maxBytes: number,
  admit: (bytes: number) => PushError | undefined = () => undefined,
): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    return Promise.reject(tooLarge(maxBytes));
  }
  const deadline = readDeadline(req);
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err: Error | undefined) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      deadline?.removeEventListener('abort', onDeadline);
      if (err) {
        req.pause();
        reject(err);
      } else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        chunks.length = 0;
        finish(tooLarge(maxBytes));
        return;
      }
      const refused = admit(chunk.length);
      if (refused) {
        chunks.length = 0;
        finish(refused);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish(undefined);
    const onError = (err: Error) => finish(new PushError(400, 'read_failed', `reading request body: ${err.message}`));
    const onClose = () => finish(new PushError(400, 'read_failed', 'reading request body: unexpected EOF'));
    const onDeadline = () => finish(new PushError(400, 'read_failed', `reading request body: ${(deadline!.reason as Error).message}`));
    if (deadline?.aborted) return onDeadline();
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('close', onClose);
    deadline?.addEventListener('abort', onDeadline, { once: true });
  });
}

function tooLarge(maxBytes: number): PushError {
  return new PushError(413, 'body_too_large', `request body is larger than the limit of ${maxBytes} bytes`);
}
