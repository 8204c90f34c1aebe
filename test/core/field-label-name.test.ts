import { describe, expect, it } from 'vitest';
import { checkFieldLabelName } from '../../core/field-label-name.js';
import { FieldError } from '../../lib/config/errors.js';

describe('checkFieldLabelName', () => {
  it('accepts any non-empty UTF-8 name, as the UTF-8 scheme of Prometheus (the reference default) does', () => {
    for (const name of ['a', '__tenant_id__', '2x', 'k8s.io/app', 'ü']) expect(() => checkFieldLabelName('values', name)).not.toThrow();
  });

  it('rejects an empty name or one that is not UTF-8 (a lone surrogate) at the attribute, naming it as written', () => {
    for (const name of ['', 'a\ud800']) {
      let caught: unknown;
      try {
        checkFieldLabelName('source', name);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(FieldError);
      expect([(caught as FieldError).field, (caught as FieldError).reason]).toEqual(['source', `invalid label name: ${name}`]);
    }
  });
});
