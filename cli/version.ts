// The version lives in lib/ because the config language's `constants.version` reads it too.
export { packageVersion } from '../lib/package-version.js';
