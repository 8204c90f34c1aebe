import type { Context } from 'koa';

/** The largest request body the playground reads: a generous sample, not a log archive. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/**
 * Reads a JSON object body. Only `application/json` is accepted: a browser must then ask before
 * sending it from another origin, and the playground never says yes, so other sites cannot make
 * it run configs (which may read local files and environment variables).
 */
export async function readJsonBody(ctx: Context): Promise<Record<string, unknown>> {
  if (!ctx.is('application/json')) ctx.throw(415, 'expected a JSON body (Content-Type: application/json)');
  const declared = Number(ctx.get('content-length'));
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) ctx.throw(413, `request body over ${MAX_BODY_BYTES} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) ctx.throw(413, `request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    ctx.throw(400, `invalid JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) ctx.throw(400, 'expected a JSON object');
  return value as Record<string, unknown>;
}
