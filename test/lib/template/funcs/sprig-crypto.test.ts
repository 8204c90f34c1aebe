import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bcryptHash } from '../../../../lib/template/funcs/bcrypt.js';
import { render, renderError } from '../render.js';

const BCRYPT_ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const STD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const bcryptSalt = (s: string): Uint8Array =>
  Buffer.from([...s].map((c) => STD_ALPHABET[BCRYPT_ALPHABET.indexOf(c)]).join('') + '==', 'base64');

describe('sprig hashes', () => {
  it('hashes with sha1, sha256, sha512 and adler32', () => {
    expect(render('{{ "abc" | sha256sum }}')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(render('{{ "abc" | sha1sum }}')).toBe('a9993e364706816aba3e25717850c26c9cd0d89d');
    expect(render('{{ "abc" | adler32sum }}')).toBe('38600999');
    expect(render('{{ "abc" | sha512sum }}')).toBe(
      'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
    );
  });
});

describe('bcrypt and htpasswd', () => {
  it('matches OpenBSD bcrypt test vectors', () => {
    expect(bcryptHash(new Uint8Array(), 6, bcryptSalt('DCq7YPn5Rq63x1Lad4cll.'))).toBe(
      '$2a$06$DCq7YPn5Rq63x1Lad4cll.TV4S6ytwfsfvkgY8jIucDrjc8deX1s.',
    );
    expect(bcryptHash(new TextEncoder().encode('U*U'), 5, bcryptSalt('CCCCCCCCCCCCCCCCCCCCC.'))).toBe(
      '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW',
    );
  });

  it('hashes with cost 10 and refuses passwords over 72 bytes', () => {
    expect(render('{{ bcrypt "secret" }}')).toMatch(/^\$2a\$10\$[./A-Za-z0-9]{53}$/);
    expect(render('{{ bcrypt (repeat 73 "x") }}')).toBe('failed to encrypt string with bcrypt: bcrypt: password length exceeds 72 bytes');
  });

  it('writes htpasswd lines and rejects user names with a colon', () => {
    expect(render('{{ htpasswd "myUser" "myPassword" }}')).toMatch(/^myUser:\$2a\$10\$/);
    expect(render('{{ htpasswd "wrongus:er" "x" }}')).toBe('invalid username: wrongus:er');
  });
});

describe('derivePassword', () => {
  it('derives the Master Password results sprig documents', () => {
    expect(render('{{ derivePassword 1 "long" "password" "user" "example.com" }}')).toBe('ZedaFaxcZaso9*');
    expect(render('{{ derivePassword 1 "pin" "password" "user" "example.com" }}')).toBe('6685');
    expect(render('{{ derivePassword 1 "nope" "password" "user" "example.com" }}')).toBe('cannot find password template nope');
  });
});

describe('AES, random bytes and UUIDs', () => {
  it('round-trips encryptAES and decryptAES', () => {
    expect(render('{{ "plaintext" | encryptAES "secretkey" | decryptAES "secretkey" }}')).toBe('plaintext');
    expect(render('{{ encryptAES "k" "" }}|{{ decryptAES "k" "" }}')).toBe('|');
    expect(renderError('{{ decryptAES "k" "YWJj" }}')).toContain(
      'error calling decryptAES: runtime error: slice bounds out of range [:16] with capacity 3',
    );
  });

  it('returns base64 random bytes and v4 UUIDs', () => {
    expect(Buffer.from(render('{{ randBytes 12 }}'), 'base64')).toHaveLength(12);
    const [a, b] = render('{{ uuidv4 }} {{ uuidv4 }}').split(' ');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a).not.toBe(b);
  });
});

describe('keys and certificates', () => {
  it('generates private keys in Go PEM forms', () => {
    expect(render('{{ genPrivateKey "ecdsa" }}')).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n/);
    expect(render('{{ genPrivateKey "ed25519" }}')).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(render('{{ genPrivateKey "bad" }}')).toBe('Unknown type bad');
  });

  it('generates a CA and a certificate it signs, with names and addresses', () => {
    const out = render(
      '{{ $ca := genCA "foo-ca" 365 }}{{ $c := genSignedCert "foo.com" (list "10.0.0.1" "10.0.0.2") (list "bar.com" "bat.com") 365 $ca }}{{ $ca.Cert }}|{{ $c.Cert }}|{{ $c.Key }}',
    );
    const [caPem, certPem, keyPem] = out.split('|') as [string, string, string];
    const ca = new X509Certificate(caPem);
    const cert = new X509Certificate(certPem);
    expect(ca.subject).toBe('CN=foo-ca');
    expect(ca.ca).toBe(true);
    expect(cert.subject).toBe('CN=foo.com');
    expect(cert.ca).toBe(false);
    expect(cert.subjectAltName).toBe('DNS:bar.com, DNS:bat.com, IP Address:10.0.0.1, IP Address:10.0.0.2');
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(keyPem).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n/);
  });

  it('uses a given key and rebuilds certificates from base64', () => {
    const out = render(
      '{{ $k := genPrivateKey "ecdsa" }}{{ $c := genSelfSignedCertWithKey "x" nil nil 1 $k }}{{ $b := buildCustomCert (b64enc $c.Cert) (b64enc $c.Key) }}{{ eq $b.Cert $c.Cert }} {{ eq $c.Key $k }}',
    );
    expect(out).toBe('true true');
    expect(renderError('{{ buildCustomCert (b64enc "fail") (b64enc "x") }}')).toContain(
      'error calling buildCustomCert: unable to decode certificate',
    );
    expect(renderError('{{ genSelfSignedCert "x" (list 1) nil 1 }}')).toContain('error parsing ip: 1 is not a string');
  });
});
