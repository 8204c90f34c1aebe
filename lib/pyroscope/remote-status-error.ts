/**
 * The reference writer's error for a downstream that answered with a non-200 status: the code and
 * the start of its body. The receiver looks for it in an error tree to answer its own client.
 */
export class RemoteStatusError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: string,
  ) {
    super(`pyroscope write error: status=${statusCode} msg=${body}`);
    this.name = 'RemoteStatusError';
  }
}
