#!/usr/bin/env node
// A source checkout's launcher for the built CLI (npm ci builds it; `npm run build` rebuilds it).
// The installed package's bin is dist/bin/rivulet.js itself.
await import('../dist/bin/rivulet.js');
