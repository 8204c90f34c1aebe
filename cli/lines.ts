import { StringDecoder } from 'node:string_decoder';
import { TextLineSplitter } from '../lib/text-lines.js';

/**
 * The lines of a text stream, a chunk's worth at a time, split as `readline` splits them with
 * `crlfDelay: Infinity`: at `\n`, `\r\n` or a lone `\r`; a last line without a newline counts;
 * nothing follows a final newline. UTF-8 characters split across chunks are joined first.
 *
 * Faster than `readline` for bulk input: one await per chunk instead of per line. A line longer
 * than a chunk is joined once, at its end, so time stays linear in its length.
 */
export async function* lineBatches(input: NodeJS.ReadableStream): AsyncGenerator<string[]> {
  const decoder = new StringDecoder('utf8');
  const splitter = new TextLineSplitter(true);
  for await (const chunk of input) {
    const lines: string[] = [];
    splitter.push(typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer), lines);
    if (lines.length > 0) yield lines;
  }
  const lines: string[] = [];
  splitter.push(decoder.end(), lines);
  const last = splitter.end();
  if (last !== undefined) lines.push(last);
  if (lines.length > 0) yield lines;
}
