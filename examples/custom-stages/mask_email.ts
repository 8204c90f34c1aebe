/**
 * stage.mask_email — a worked example of a custom stage: replaces every e-mail address in the
 * line (or in one extracted value) with a mask, keeping the domain when asked. Load it with
 * `rivulet process --stages examples/custom-stages/mask_email.ts …` or with a
 * `stages.import` block (see pipeline.alloy next to this file), then write `stage.mask_email { }`.
 *
 * Masking twice gives the same text as masking once: an address only starts where no address
 * character (nor `@`) precedes it, and the mask may not hold an `@`, so a masked address never
 * turns into a new one. test/testing/mask-email-example.test.ts checks that property and the
 * others with the testing kit.
 */
import { defineStage, FieldError, PER_ENTRY, t, type StageImpl } from 'rivulet';

export interface MaskEmailConfig {
  /** Extracted name whose text is masked; unset means the line. */
  readonly source?: string;
  readonly mask: string;
  readonly keep_domain: boolean;
}

export const maskEmail = defineStage<MaskEmailConfig>({
  name: 'mask_email',
  doc: 'Replaces e-mail addresses in the line, or in an extracted value, with a mask.',
  fields: {
    source: { kind: t.string, doc: 'Extracted name whose text is masked. Unset means the line.' },
    mask: { kind: t.string, default: '***', doc: 'Text put in place of each address (of its local part with `keep_domain`).' },
    keep_domain: { kind: t.bool, default: false, doc: 'Keeps `@domain` after the mask.' },
  },
  validate: validateMaskEmail,
  build: buildMaskEmail,
  // Keeps nothing between entries and changes no label: threads may split its entries anyhow.
  partitioning: () => PER_ENTRY,
});

export function validateMaskEmail(config: MaskEmailConfig): void {
  if (config.source === '') throw new FieldError('source', 'source must not be empty when set');
  if (config.mask === '') throw new FieldError('mask', 'mask must not be empty');
  if (config.mask.includes('@')) throw new FieldError('mask', `mask must not contain "@", got ${JSON.stringify(config.mask)}`);
}

// The common shape of an address, not all of RFC 5322: enough for masking log text.
const EMAIL = /(?<![A-Za-z0-9._%+@-])[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)/g;

/** Replaces each address in `text`. */
export function maskEmails(text: string, mask: string, keepDomain: boolean): string {
  return text.replace(EMAIL, (_address, domain: string) => (keepDomain ? `${mask}@${domain}` : mask));
}

/** The addresses `maskEmails` would replace in `text`, in order. */
export function emailAddresses(text: string): string[] {
  return [...text.matchAll(EMAIL)].map((match) => match[0]);
}

function buildMaskEmail(config: MaskEmailConfig): StageImpl {
  const { source, mask, keep_domain: keepDomain } = config;
  return {
    kind: 'map',
    process: (entry) => {
      if (source === undefined) {
        entry.line = maskEmails(entry.line, mask, keepDomain);
        return entry;
      }
      const value = Object.hasOwn(entry.extracted, source) ? entry.extracted[source] : undefined;
      // Only text is masked; numbers, booleans and absent values pass as they are.
      if (typeof value === 'string') entry.extracted[source] = maskEmails(value, mask, keepDomain);
      return entry;
    },
  };
}
