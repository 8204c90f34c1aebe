import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isValidUtf8String } from '../../lib/go/values.js';
import { goTrimSpace, parseEventLogMessage, parseHostEvent, sanitizeLegacyLabelName, type EventFieldOptions } from '../../lib/hostevent.js';

const defaults: EventFieldOptions = { dropInvalidLabels: false, overwriteExisting: false };
const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 200);

function hostEvent(message: string, options: Partial<EventFieldOptions> = {}, extracted: Record<string, unknown> = {}) {
  parseHostEvent(message, extracted, { ...defaults, ...options });
  return extracted;
}

function eventLog(message: string, options: Partial<EventFieldOptions> = {}, extracted: Record<string, unknown> = {}) {
  parseEventLogMessage(message, extracted, { ...defaults, ...options });
  return extracted;
}

describe('sanitizeLegacyLabelName', () => {
  it('replaces each character that is not a letter or underscore with one underscore', () => {
    expect(sanitizeLegacyLabelName('Ünïcode')).toBe('_n_code');
    expect(sanitizeLegacyLabelName(' Key1 ')).toBe('_Key1_');
    expect(sanitizeLegacyLabelName('Key@3')).toBe('Key_3');
  });

  it('replaces a digit only in first position', () => {
    expect(sanitizeLegacyLabelName('0Key2')).toBe('_Key2');
  });

  it('turns the empty name into a single underscore', () => {
    expect(sanitizeLegacyLabelName('')).toBe('_');
  });

  it('replaces a character outside the BMP with one underscore, not two', () => {
    expect(sanitizeLegacyLabelName('a🤷b')).toBe('a_b');
  });

  it('always yields a legacy label name of the same character count (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-composite' }), (name) => {
        const out = sanitizeLegacyLabelName(name);
        expect(out).toMatch(/^[a-zA-Z_][a-zA-Z0-9_]*$/);
        expect([...out].length).toBe(Math.max(1, [...name].length));
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('goTrimSpace', () => {
  it('trims Go white space, including NEL and NBSP', () => {
    expect(goTrimSpace('\u0085\u00a0\t a b \u3000\v')).toBe('a b');
  });

  it('keeps the byte-order mark, which String.prototype.trim would remove', () => {
    expect(goTrimSpace('\ufeffx\ufeff')).toBe('\ufeffx\ufeff');
  });
});

describe('parseEventLogMessage', () => {
  it('splits each CRLF line at its first colon and trims the value', () => {
    expect(eventLog('Key1: Value 1\r\nKey3: Value: 3')).toEqual({ Key1: 'Value 1', Key3: 'Value: 3' });
  });

  it('keeps a lone LF inside the value', () => {
    expect(eventLog('K: a\nb: c\r\nL: d')).toEqual({ K: 'a\nb: c', L: 'd' });
  });

  it('skips lines without a colon', () => {
    expect(eventLog('\n\rwhat; is this?\n\r')).toEqual({});
  });

  it('stores a title line with an empty value under its sanitized key', () => {
    expect(eventLog('Network connection detected:\r\nA: b')).toEqual({ Network_connection_detected: '', A: 'b' });
  });

  it('does not trim the key before checking it', () => {
    expect(eventLog(' Key1 : v')).toEqual({ _Key1_: 'v' });
  });

  it('drops invalid keys with drop_invalid_labels but keeps valid titles', () => {
    expect(eventLog('Key 1: a\r\nTitle:\r\n: b\r\nOk: c', { dropInvalidLabels: true })).toEqual({ Title: '', Ok: 'c' });
  });

  it('suffixes a key already present once, and a third duplicate overwrites the suffixed key', () => {
    expect(eventLog('K: 1\r\nK: 2\r\nK: 3')).toEqual({ K: '1', K_extracted: '3' });
  });

  it('overwrites with overwrite_existing', () => {
    expect(eventLog('K: 1\r\nK: 2', { overwriteExisting: true }, { K: 'old' })).toEqual({ K: '2' });
  });

  it('checks collisions against the sanitized key', () => {
    expect(eventLog('a b: 1', {}, { a_b: 'x' })).toEqual({ a_b: 'x', a_b_extracted: '1' });
  });

  it('skips values that are not valid UTF-8', () => {
    expect(eventLog('K: \ud800\r\nL: ok')).toEqual({ L: 'ok' });
  });
});

describe('parseHostEvent', () => {
  it('stores the first section as Description', () => {
    expect(hostEvent('Windows Update started downloading an update.')).toEqual({
      Description: 'Windows Update started downloading an update.',
    });
  });

  it('treats LF-only text as one section and glues its lines together', () => {
    expect(hostEvent('a\nb\n\nc: d')).toEqual({ Description: 'abc: d' });
    expect(hostEvent('a\r\nb')).toEqual({ Description: 'ab' });
  });

  it('stores an empty message as an empty Description', () => {
    expect(hostEvent('')).toEqual({ Description: '' });
  });

  it('prefixes the keys of a section with its title and removes spaces and tabs from keys', () => {
    const message =
      'Desc\r\n\r\nSubject:\r\n\tSecurity ID:\t\tS-1-1-1\r\n\tAccount Name:\t\tBob\r\n\r\nImpersonation Level:\t\tImpersonation';
    expect(hostEvent(message)).toEqual({
      Description: 'Desc',
      Subject_SecurityID: 'S-1-1-1',
      Subject_AccountName: 'Bob',
      ImpersonationLevel: 'Impersonation',
    });
  });

  it('keeps parentheses in keys, which are valid under the UTF-8 label-name scheme', () => {
    expect(hostEvent('D\r\n\r\nDetails:\r\n\tPackage Name (NTLM only):\t-')).toEqual({
      Description: 'D',
      'Details_PackageName(NTLMonly)': '-',
    });
  });

  it('appends continuation lines after a comma and deletes their tabs', () => {
    const message = 'D\r\n\r\nPrivileges:\t\tSeA\r\n\t\t\tSeB\r\n\t\t\tSeC';
    expect(hostEvent(message)).toEqual({ Description: 'D', Privileges: 'SeA,SeB,SeC' });
  });

  it('starts a new field at a continuation line that holds a colon', () => {
    expect(hostEvent('D\r\n\r\nA: 1\r\nat 10:30\r\nmore')).toEqual({ Description: 'D', A: '1', at10: '30,more' });
  });

  it('ignores a line without a colon right after a title', () => {
    expect(hostEvent('D\r\n\r\nTitle:\r\nloose\r\nK: v')).toEqual({ Description: 'D', Title_K: 'v' });
  });

  it('does not take a title with a trailing space as a title', () => {
    expect(hostEvent('D\r\n\r\nSubject: \r\nK: v')).toEqual({ Description: 'D', Subject: '', K: 'v' });
  });

  it('takes a title only from the first line of a section', () => {
    expect(hostEvent('D\r\n\r\nA: 1\r\nTitle:\r\nK: v')).toEqual({ Description: 'D', A: '1', K: 'v' });
  });

  it('loses the title when the section starts with a blank line', () => {
    expect(hostEvent('D\r\n\r\n\r\nTitle:\r\nK: v')).toEqual({ Description: 'D', K: 'v' });
  });

  it('applies a title to its own section only', () => {
    expect(hostEvent('D\r\n\r\nT:\r\nA: 1\r\n\r\nB: 2')).toEqual({ Description: 'D', T_A: '1', B: '2' });
  });

  it('keeps white space other than tab, CR, LF and space in keys, and trims it from values', () => {
    expect(hostEvent('D\r\n\r\na\u00a0b: \u00a0v\u0085')).toEqual({ Description: 'D', 'a\u00a0b': 'v' });
  });

  it('sanitizes an empty key to an underscore, or drops it with drop_invalid_labels', () => {
    expect(hostEvent('D\r\n\r\n : v')).toEqual({ Description: 'D', _: 'v' });
    expect(hostEvent('D\r\n\r\n : v', { dropInvalidLabels: true })).toEqual({ Description: 'D' });
  });

  it('sanitizes a key that is not valid UTF-8 with the legacy sanitizer', () => {
    expect(hostEvent('D\r\n\r\nk\ud800y: v')).toEqual({ Description: 'D', k_y: 'v' });
  });

  it('suffixes keys already extracted unless overwrite_existing', () => {
    expect(hostEvent('D\r\n\r\nmessage: v', {}, { message: 'm', Description: 'old' })).toEqual({
      message: 'm',
      Description: 'old',
      Description_extracted: 'D',
      message_extracted: 'v',
    });
    expect(hostEvent('D\r\n\r\nmessage: v', { overwriteExisting: true }, { message: 'm' })).toEqual({ message: 'v', Description: 'D' });
  });

  it('stores a __proto__ key as an ordinary own key', () => {
    const out = hostEvent('D\r\n\r\n__proto__: v');
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toBe('v');
  });

  it('never throws and sets a Description unless it is not valid UTF-8 (property)', () => {
    const piece = fc.constantFrom('\r\n', '\r\n\r\n', ':', ' ', '\t', 'Key', 'Value', 'é', '\ud800', '');
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, fc.string()), { maxLength: 20 }), fc.boolean(), fc.boolean(), (parts, drop, overwrite) => {
        const message = parts.join('');
        const out = hostEvent(message, { dropInvalidLabels: drop, overwriteExisting: overwrite });
        expect(Object.hasOwn(out, 'Description')).toBe(isValidUtf8String(message.split('\r\n\r\n')[0]!));
        for (const value of Object.values(out)) expect(value).not.toMatch(/[\t\r\n]/);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
