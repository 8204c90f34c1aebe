// The shard worker started from the TypeScript sources (tests, a checkout under tsx): a worker
// thread does not inherit the TypeScript loader, so it registers tsx before loading the worker.
import { register } from 'tsx/esm/api';

register();
await import('./shard-worker.ts');
