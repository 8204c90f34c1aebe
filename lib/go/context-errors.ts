/**
 * Go's two context errors, with their exact texts: why a request's work stopped before it was done.
 */

/** The caller's deadline passed. */
export class DeadlineExceededError extends Error {
  constructor() {
    super('context deadline exceeded');
    this.name = 'DeadlineExceededError';
  }
}

/** The caller went away (client disconnected, component stopped). */
export class CanceledError extends Error {
  constructor() {
    super('context canceled');
    this.name = 'CanceledError';
  }
}
