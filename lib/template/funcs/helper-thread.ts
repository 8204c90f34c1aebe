/**
 * The slow crypto of sprig's functions on a helper thread, waited for synchronously with a time
 * limit. Generating a 4096-bit RSA or a DSA key takes from a few hundred milliseconds to several
 * seconds, derivePassword's scrypt a few hundred, and neither can be interrupted; a render must
 * stop at its time budget, so the main thread waits for the helper at most the time the render
 * has left, and on time-out leaves the work to the helper (which is stopped) instead of holding
 * the event loop. Without a time limit the work is done in place.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject, scryptSync } from 'node:crypto';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';

const KEY_OPTIONS = {
  'rsa-4096': ['rsa', { modulusLength: 4096 }],
  'rsa-2048': ['rsa', { modulusLength: 2048 }],
  'dsa-2048': ['dsa', { modulusLength: 2048, divisorLength: 256 }],
} as const;

/** The keys the helper makes: the slow ones (EC and Ed25519 keys take microseconds). */
export type SlowKeyKind = keyof typeof KEY_OPTIONS;

/** derivePassword's scrypt parameters (Master Password's), with room for its 32 MiB. */
const SCRYPT_OPTIONS = { N: 32768, r: 8, p: 2, maxmem: 256 * 1024 * 1024 };
const SCRYPT_KEY_LENGTH = 64;

type Job = { readonly key: SlowKeyKind } | { readonly password: Uint8Array; readonly salt: Uint8Array };

// CommonJS evaluated in the helper: one job at a time, the answer posted on the reply port
// before the waiting main thread is woken.
const HELPER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { generateKeyPairSync, scryptSync } = require('node:crypto');
const KEY_OPTIONS = ${JSON.stringify(KEY_OPTIONS)};
const SCRYPT_OPTIONS = ${JSON.stringify(SCRYPT_OPTIONS)};
parentPort.on('message', ({ job, done }) => {
  let reply;
  try {
    if (job.key !== undefined) {
      const [type, options] = KEY_OPTIONS[job.key];
      reply = { bytes: generateKeyPairSync(type, options).privateKey.export({ type: 'pkcs8', format: 'der' }) };
    } else {
      reply = { bytes: scryptSync(job.password, job.salt, ${SCRYPT_KEY_LENGTH}, SCRYPT_OPTIONS) };
    }
  } catch (err) {
    reply = { error: String(err && err.message) };
  }
  workerData.replies.postMessage(reply);
  Atomics.store(done, 0, 1);
  Atomics.notify(done, 0);
});
`;

interface Helper {
  readonly worker: Worker;
  readonly replies: MessagePort;
}

let helper: Helper | undefined;

function startHelper(): Helper {
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(HELPER_SOURCE, { eval: true, workerData: { replies: port1 }, transferList: [port1] });
  // Neither keeps the process alive; an idle helper costs nothing.
  worker.unref();
  port2.unref();
  worker.on('error', () => stopHelper(worker));
  return { worker, replies: port2 };
}

function stopHelper(worker: Worker): void {
  if (helper?.worker !== worker) return;
  helper.replies.close();
  helper = undefined;
  void worker.terminate();
}

/** Runs a job on the helper, waiting at most `timeoutMs`: its bytes, or undefined on time-out. */
function onHelper(job: Job, timeoutMs: number): Uint8Array | undefined {
  helper ??= startHelper();
  const { worker, replies } = helper;
  const done = new Int32Array(new SharedArrayBuffer(4));
  worker.postMessage({ job, done });
  if (Atomics.wait(done, 0, 0, Math.max(0, timeoutMs)) === 'timed-out') {
    // The helper is busy with work no one wants: a fresh one serves the next call.
    stopHelper(worker);
    return undefined;
  }
  const reply = receiveMessageOnPort(replies)?.message as { bytes?: Uint8Array; error?: string } | undefined;
  if (reply?.bytes === undefined) throw new Error(reply?.error ?? 'the helper thread did not answer');
  return reply.bytes;
}

/**
 * A new private key of `kind`, made within `timeoutMs` (`Infinity`: in place), or undefined when
 * the time ran out first. Throws the generator's own error.
 */
export function generateSlowKey(kind: SlowKeyKind, timeoutMs: number): KeyObject | undefined {
  if (timeoutMs === Number.POSITIVE_INFINITY) {
    const [type, options] = KEY_OPTIONS[kind];
    return generateKeyPairSync(type as 'rsa', options).privateKey;
  }
  const der = onHelper({ key: kind }, timeoutMs);
  return der === undefined ? undefined : createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' });
}

/** derivePassword's scrypt key, made within `timeoutMs` (`Infinity`: in place), or undefined. */
export function derivePasswordKey(password: Uint8Array, salt: Uint8Array, timeoutMs: number): Buffer | undefined {
  if (timeoutMs === Number.POSITIVE_INFINITY) return scryptSync(password, salt, SCRYPT_KEY_LENGTH, SCRYPT_OPTIONS);
  const key = onHelper({ password, salt }, timeoutMs);
  return key === undefined ? undefined : Buffer.from(key);
}
