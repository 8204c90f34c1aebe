import { describe, expect, it } from 'vitest';
import { findError, joinErrors, JoinedError, WrappedError } from '../../../lib/go/error-chain.js';
import { RemoteStatusError } from '../../../lib/pyroscope/remote-status-error.js';

describe('error chains', () => {
  it('prints causes after their context and joins errors one per line', () => {
    const joined = joinErrors([new WrappedError('failed to ingest profile to appendable 0', new Error('error1')), new Error('error2')]);
    expect(joined?.message).toBe('failed to ingest profile to appendable 0: error1\nerror2');
    expect(joinErrors([])).toBeUndefined();
  });

  it('finds the first typed error depth first, through causes and joined lists', () => {
    const first = new RemoteStatusError(429, 'slow down');
    const second = new RemoteStatusError(400, 'bad');
    const tree = new JoinedError([new Error('plain'), new WrappedError('a', new WrappedError('b', first)), second]);
    expect(findError(tree, (e): e is RemoteStatusError => e instanceof RemoteStatusError)).toBe(first);
    expect(first.message).toBe('pyroscope write error: status=429 msg=slow down');
  });
});
