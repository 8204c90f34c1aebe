import { lines, type Sample } from './sample.js';

/** Card numbers redacted by their Luhn checksum. */
export const luhnSample: Sample = {
  id: 'luhn',
  title: 'Credit card numbers (luhn)',
  description:
    'Digit runs that pass the Luhn checksum are redacted; spaces and dashes may separate the groups. Order numbers that fail the checksum stay.',
  inputFormat: 'text',
  now: '2024-05-01T12:00:00Z',
  config: String.raw`stage.luhn {
  delimiters  = " -"
  replacement = "[card]"
}
`,
  input: lines(
    'payment accepted card=4111 1111 1111 1111 amount=12.00',
    'payment accepted card=5500-0000-0000-0004 amount=99.90',
    'order 1234567812345678 shipped',
    'refund to 378282246310005 queued',
  ),
};
