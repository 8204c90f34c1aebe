/** Everything a shared link restores. */
export interface SharedState {
  readonly config: string;
  readonly input: string;
  readonly inputFormat: 'jsonl' | 'text';
  readonly now: string;
  readonly seed?: number;
}

const PREFIX = '#s=';

/**
 * The state as a URL hash: JSON, deflated with the platform's CompressionStream, in base64url.
 * The hash never reaches the server, so a shared pipeline stays between the people who share it.
 */
export async function encodeState(state: SharedState): Promise<string> {
  const json = JSON.stringify({ v: 1, ...state });
  const deflated = await pipeThrough(new TextEncoder().encode(json), new CompressionStream('deflate-raw'));
  return PREFIX + toBase64Url(deflated);
}

/** Reads a hash made by `encodeState`; undefined when the hash holds no (valid) state. */
export async function decodeState(hash: string): Promise<SharedState | undefined> {
  if (!hash.startsWith(PREFIX)) return undefined;
  try {
    const bytes = fromBase64Url(hash.slice(PREFIX.length));
    const json = new TextDecoder().decode(await pipeThrough(bytes, new DecompressionStream('deflate-raw')));
    const value = JSON.parse(json) as Record<string, unknown>;
    if (value.v !== 1 || typeof value.config !== 'string' || typeof value.input !== 'string') return undefined;
    return {
      config: value.config,
      input: value.input,
      inputFormat: value.inputFormat === 'text' ? 'text' : 'jsonl',
      now: typeof value.now === 'string' ? value.now : '',
      ...(typeof value.seed === 'number' ? { seed: value.seed } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * The sample the state is exactly (config, input and options), `preferred` first when several
 * are; undefined once anything was edited.
 */
export function matchingSample<T extends SharedState & { readonly id: string }>(
  state: SharedState,
  samples: readonly T[],
  preferred?: string,
): T | undefined {
  const same = (s: T) =>
    s.config === state.config &&
    s.input === state.input &&
    s.inputFormat === state.inputFormat &&
    s.now === state.now &&
    s.seed === state.seed;
  const first = samples.find((s) => s.id === preferred);
  return first && same(first) ? first : samples.find(same);
}

async function pipeThrough(bytes: Uint8Array, transform: CompressionStream | DecompressionStream): Promise<Uint8Array> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(transform);
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
