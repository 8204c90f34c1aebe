/**
 * stage.decolorize — removes ANSI escape sequences (colours, cursor moves, OSC titles) from the
 * line. Reference quirks kept: the pattern is the reference's fixed one, so a CSI sequence whose
 * final byte is a letter of the visible text eats that letter (`ESC[0;32http` → `ttp`, although
 * the reference's docs show `http`); the 8-bit introducer U+009B counts like `ESC [`; an ESC
 * followed by a character that cannot end a sequence is left alone. Labels and extracted values
 * are untouched.
 */
import { defineStage, type StageImpl } from '../core/stage.js';
import { PER_ENTRY } from '../core/stage-partitioning.js';

/** The stage has no arguments. */
export type DecolorizeConfig = Readonly<Record<string, never>>;

export const decolorize = defineStage<DecolorizeConfig>({
  name: 'decolorize',
  doc: 'Removes ANSI color codes and other terminal escape sequences from each line.',
  fields: {},
  validate: validateDecolorize,
  build: buildDecolorize,
  partitioning: () => PER_ENTRY,
});

/** Nothing to check: the stage takes no arguments. */
function validateDecolorize(_config: DecolorizeConfig): void {}

// Our own fixed pattern (never user input), equivalent to the reference's Go regexp on every
// input: `\d` is ASCII-only in both. First alternative: OSC-like sequences ended by BEL; second:
// CSI-like sequences with up to four-digit parameters and a final byte from [0-9A-PRZcf-ntqry=><~].
const ANSI_SEQUENCE =
  /[\u001B\u009B][[\]()#;?]*(?:(?:(?:[a-zA-Z\d]*(?:;[a-zA-Z\d]*)*)?\u0007)|(?:(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PRZcf-ntqry=><~]))/g;

/** The text with every escape sequence removed. */
export function stripAnsi(text: string): string {
  if (text.indexOf('\u001B') < 0 && text.indexOf('\u009B') < 0) return text;
  return text.replace(ANSI_SEQUENCE, '');
}

function buildDecolorize(): StageImpl {
  return {
    kind: 'map',
    process: (entry) => {
      entry.line = stripAnsi(entry.line);
      return entry;
    },
  };
}
