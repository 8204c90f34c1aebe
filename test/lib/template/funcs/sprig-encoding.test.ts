import { describe, expect, it } from 'vitest';
import { render } from '../render.js';

describe('sprig base64 and base32', () => {
  it.each([
    ['{{ b64enc "coffee" }}|{{ b64dec "Y29mZmVl" }}|{{ b64enc "héllo" }}|{{ b64dec "aMOpbGxv" }}', 'Y29mZmVl|coffee|aMOpbGxv|héllo'],
    [
      '{{ b64dec "Y29m\\nZmVl" }}|{{ b64dec "aGVsbG8" }}|{{ b64dec "aGVsbG8=x" }}|{{ b64dec "a===" }}',
      'coffee|illegal base64 data at input byte 4|illegal base64 data at input byte 8|illegal base64 data at input byte 1',
    ],
    ['{{ b32enc "coffee" }}|{{ b32dec "MNXWMZTFMU======" }}|{{ b32enc "" }}|{{ b32dec "" }}', 'MNXWMZTFMU======|coffee||'],
    ['{{ b32dec "MNXWMZTFMU" }}|{{ b32dec "M1======" }}', 'illegal base32 data at input byte 8|illegal base32 data at input byte 1'],
  ])('renders %j as %j', (template, want) => {
    expect(render(template)).toBe(want);
  });
});
