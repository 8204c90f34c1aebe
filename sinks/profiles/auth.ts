/**
 * The Authorization header an endpoint's credentials give. Files are read for every request, so
 * a rotated token is picked up without a reload.
 */
import { readFileSync } from 'node:fs';
import type { EndpointAuth } from './config.js';

function fromFile(file: string): string {
  return readFileSync(file, 'utf8').trim();
}

export function authorizationHeader(auth: EndpointAuth): string | undefined {
  switch (auth.kind) {
    case 'none':
      return undefined;
    case 'bearer':
      return `Bearer ${auth.tokenFile ? fromFile(auth.tokenFile) : auth.token}`;
    case 'authorization':
      return `${auth.type} ${auth.credentialsFile ? fromFile(auth.credentialsFile) : auth.credentials}`;
    case 'basic': {
      const user = auth.usernameFile ? fromFile(auth.usernameFile) : auth.username;
      const password = auth.passwordFile ? fromFile(auth.passwordFile) : auth.password;
      return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    }
  }
}
