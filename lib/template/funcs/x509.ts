/**
 * The certificate and key handling behind sprig's genCA/genSelfSignedCert/genSignedCert
 * family, following Go's crypto/x509: the same extensions in the same order (key usage,
 * extended key usage, basic constraints, subject/authority key ids, subject alternative
 * names), SHA-256 based signatures, and keys written in Go's PEM forms (PKCS#1 for RSA, SEC 1
 * for ECDSA, PKCS#8 for Ed25519, OpenSSL's DSA layout).
 */
import { X509Certificate, createHash, createPrivateKey, createPublicKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { GoError } from '../errors.js';
import * as der from './der.js';

const PEM_RE = /-----BEGIN ([^-\r\n]+)-----\r?\n([\s\S]*?)-----END \1-----/;

/** PEM text as Go's pem.EncodeToMemory writes it. */
export function pemEncode(type: string, bytes: Uint8Array): string {
  const b64 = Buffer.from(bytes).toString('base64');
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${type}-----\n${lines.map((l) => l + '\n').join('')}-----END ${type}-----\n`;
}

/** Go's pem.Decode: the first block, or undefined. */
export function pemDecode(text: string): { type: string; bytes: Uint8Array } | undefined {
  const m = PEM_RE.exec(text);
  if (m === null) return undefined;
  const body = m[2]!.split(/\r?\n/).filter((line) => line.trim() !== '' && !line.includes(':'));
  return { type: m[1]!, bytes: Buffer.from(body.join(''), 'base64') };
}

// ---------------------------------------------------------------------------------------------
// Keys

function modPow(base: bigint, exp: bigint, mod: bigint): bigint {
  let result = 1n;
  base %= mod;
  while (exp > 0n) {
    if (exp & 1n) result = (result * base) % mod;
    base = (base * base) % mod;
    exp >>= 1n;
  }
  return result;
}

/** p, q, g and x of a DSA private key (read from its PKCS#8 form). */
function dsaParameters(key: KeyObject): { p: bigint; q: bigint; g: bigint; x: bigint } {
  const pkcs8 = key.export({ type: 'pkcs8', format: 'der' });
  const [, algorithm, privateKey] = der.children(der.read(pkcs8));
  const params = der.children(der.children(algorithm!)[1]!).map(der.integerValue);
  const x = der.integerValue(der.read(privateKey!.content));
  return { p: params[0]!, q: params[1]!, g: params[2]!, x };
}

/** Go's pemBlockForKey as PEM text. */
export function pemForKey(key: KeyObject): string {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return key.export({ type: 'pkcs1', format: 'pem' }) as string;
    case 'ec':
      return key.export({ type: 'sec1', format: 'pem' }) as string;
    case 'dsa': {
      const { p, q, g, x } = dsaParameters(key);
      const y = modPow(g, x, p);
      const body = der.sequence(der.integer(0n), der.integer(p), der.integer(q), der.integer(g), der.integer(y), der.integer(x));
      return pemEncode('DSA PRIVATE KEY', body);
    }
    default:
      return key.export({ type: 'pkcs8', format: 'pem' }) as string;
  }
}

function importDsa(bytes: Uint8Array): KeyObject {
  const fields = der.children(der.read(bytes)).map(der.integerValue);
  const [, p, q, g, , x] = fields;
  const pkcs8 = der.sequence(
    der.integer(0n),
    der.sequence(der.oid('1.2.840.10040.4.1'), der.sequence(der.integer(p!), der.integer(q!), der.integer(g!))),
    der.octetString(der.integer(x!)),
  );
  return createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' });
}

/** sprig's parsePrivateKeyPEM. */
export function parsePrivateKeyPem(text: string): KeyObject {
  const block = pemDecode(text);
  if (block === undefined) throw new GoError('no PEM data in input');
  const key = Buffer.from(block.bytes);
  if (block.type === 'PRIVATE KEY') {
    try {
      return createPrivateKey({ key, format: 'der', type: 'pkcs8' });
    } catch (err) {
      throw new GoError(`decoding PEM as PKCS#8: ${(err as Error).message}`);
    }
  }
  if (!block.type.endsWith(' PRIVATE KEY')) throw new GoError(`no private key data in PEM block of type ${block.type}`);
  const kind = block.type.slice(0, -' PRIVATE KEY'.length);
  try {
    switch (kind) {
      case 'RSA':
        return createPrivateKey({ key, format: 'der', type: 'pkcs1' });
      case 'EC':
        return createPrivateKey({ key, format: 'der', type: 'sec1' });
      case 'DSA':
        return importDsa(block.bytes);
    }
  } catch (err) {
    throw new GoError(`parsing ${kind} private key from PEM: ${(err as Error).message}`);
  }
  throw new GoError(`invalid private key type ${block.type}`);
}

// ---------------------------------------------------------------------------------------------
// Certificates

export const KEY_USAGE_DIGITAL_SIGNATURE = 1;
export const KEY_USAGE_KEY_ENCIPHERMENT = 4;
export const KEY_USAGE_CERT_SIGN = 32;

export interface CertificateTemplate {
  readonly commonName: string;
  readonly ipAddresses: readonly Uint8Array[];
  readonly dnsNames: readonly string[];
  readonly daysValid: number;
  readonly keyUsage: number;
  readonly isCA: boolean;
}

/** The certificate that signs: its subject name and subject key id. */
export interface Issuer {
  readonly subject: Uint8Array;
  readonly subjectKeyId: Uint8Array | undefined;
  readonly publicKeySpki: Uint8Array;
}

function reverseBits(b: number): number {
  let r = 0;
  for (let i = 0; i < 8; i++) if (b & (1 << i)) r |= 1 << (7 - i);
  return r;
}

function keyUsageExtension(usage: number): Uint8Array {
  const bytes = [reverseBits(usage & 0xff), reverseBits((usage >> 8) & 0xff)];
  const used = bytes[1] !== 0 ? bytes : bytes.slice(0, 1);
  let bitLength = used.length * 8;
  for (let i = used.length - 1; i >= 0 && bitLength > 0; i--) {
    const b = used[i]!;
    if (b === 0) {
      bitLength -= 8;
      continue;
    }
    let trailing = 0;
    while (!(b & (1 << trailing))) trailing++;
    bitLength -= trailing;
    break;
  }
  return der.bitString(new Uint8Array(used), used.length * 8 - bitLength);
}

function extension(id: string, critical: boolean, value: Uint8Array): Uint8Array {
  return critical
    ? der.sequence(der.oid(id), der.boolean(true), der.octetString(value))
    : der.sequence(der.oid(id), der.octetString(value));
}

function name(commonName: string): Uint8Array {
  if (commonName === '') return der.sequence();
  return der.sequence(der.set(der.sequence(der.oid('2.5.4.3'), der.directoryString(commonName))));
}

function signatureAlgorithm(key: KeyObject): { algorithm: Uint8Array; digest: string | null } {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { algorithm: der.sequence(der.oid('1.2.840.113549.1.1.11'), der.nullValue()), digest: 'sha256' };
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'secp384r1') return { algorithm: der.sequence(der.oid('1.2.840.10045.4.3.3')), digest: 'sha384' };
      if (curve === 'secp521r1') return { algorithm: der.sequence(der.oid('1.2.840.10045.4.3.4')), digest: 'sha512' };
      return { algorithm: der.sequence(der.oid('1.2.840.10045.4.3.2')), digest: 'sha256' };
    }
    case 'ed25519':
      return { algorithm: der.sequence(der.oid('1.3.101.112')), digest: null };
  }
  throw new GoError('x509: only RSA, ECDSA and Ed25519 keys supported');
}

/** The subjectPublicKey bits of an SPKI structure. */
function publicKeyBits(spki: Uint8Array): Uint8Array {
  const [, bits] = der.children(der.read(spki));
  return bits!.content.subarray(1);
}

/** Go's x509.CreateCertificate for sprig's templates; returns the certificate's DER bytes. */
export function createCertificate(
  template: CertificateTemplate,
  subjectKey: KeyObject,
  issuer: Issuer | 'self',
  signingKey: KeyObject,
): Uint8Array {
  const spki = new Uint8Array(createPublicKey(subjectKey).export({ type: 'spki', format: 'der' }));
  const { algorithm, digest } = signatureAlgorithm(signingKey);
  if (issuer !== 'self') {
    const signingSpki = new Uint8Array(createPublicKey(signingKey).export({ type: 'spki', format: 'der' }));
    if (Buffer.compare(Buffer.from(signingSpki), Buffer.from(issuer.publicKeySpki)) !== 0) {
      throw new GoError("x509: provided PrivateKey doesn't match parent's PublicKey");
    }
  }
  const subject = name(template.commonName);
  const issuerName = issuer === 'self' ? subject : issuer.subject;
  const serial = BigInt('0x' + randomBytes(16).toString('hex'));
  // The wall clock, as the reference's certificates are dated (see nowNs in sprig-dates.ts).
  const notBefore = new Date();
  const notAfter = new Date(notBefore.getTime() + template.daysValid * 24 * 3600 * 1000);

  const extensions: Uint8Array[] = [];
  if (template.keyUsage !== 0) extensions.push(extension('2.5.29.15', true, keyUsageExtension(template.keyUsage)));
  extensions.push(extension('2.5.29.37', false, der.sequence(der.oid('1.3.6.1.5.5.7.3.1'), der.oid('1.3.6.1.5.5.7.3.2'))));
  extensions.push(extension('2.5.29.19', true, template.isCA ? der.sequence(der.boolean(true)) : der.sequence()));
  if (template.isCA) {
    // Go derives a CA's subject key id from the public key (truncated SHA-256 since Go 1.25).
    const skid = createHash('sha256').update(publicKeyBits(spki)).digest().subarray(0, 20);
    extensions.push(extension('2.5.29.14', false, der.octetString(skid)));
  }
  const sameName = Buffer.compare(Buffer.from(issuerName), Buffer.from(subject)) === 0;
  if (issuer !== 'self' && !sameName && issuer.subjectKeyId !== undefined) {
    extensions.push(extension('2.5.29.35', false, der.sequence(der.tlv(0x80, issuer.subjectKeyId))));
  }
  if (template.dnsNames.length > 0 || template.ipAddresses.length > 0) {
    const names = [
      ...template.dnsNames.map((d) => der.tlv(0x82, new TextEncoder().encode(d))),
      ...template.ipAddresses.map((ip) => der.tlv(0x87, ip)),
    ];
    extensions.push(extension('2.5.29.17', template.commonName === '', der.sequence(...names)));
  }

  const tbs = der.sequence(
    der.explicit(0, der.integer(2n)),
    der.integer(serial),
    algorithm,
    issuerName,
    der.sequence(der.time(notBefore), der.time(notAfter)),
    subject,
    spki,
    der.explicit(3, der.sequence(...extensions)),
  );
  const signature = sign(digest, tbs, signingKey);
  return der.sequence(tbs, algorithm, der.bitString(new Uint8Array(signature)));
}

/** Reads what signing needs from a PEM CA certificate. */
export function parseIssuer(certPem: string): Issuer {
  const block = pemDecode(certPem);
  if (block === undefined) throw new GoError('unable to decode certificate');
  try {
    new X509Certificate(Buffer.from(block.bytes));
  } catch (err) {
    throw new GoError(`error parsing certificate: decodedSignerCert.Bytes: ${(err as Error).message}`);
  }
  const tbs = der.children(der.read(block.bytes))[0]!;
  const fields = der.children(tbs);
  const offset = fields[0]!.tag === 0xa0 ? 1 : 0;
  const subject = fields[offset + 4]!.raw;
  const spki = fields[offset + 5]!.raw;
  let subjectKeyId: Uint8Array | undefined;
  for (const field of fields.slice(offset + 6)) {
    if (field.tag !== 0xa3) continue;
    for (const ext of der.children(der.children(field)[0]!)) {
      const parts = der.children(ext);
      if (Buffer.from(parts[0]!.raw).equals(Buffer.from(der.oid('2.5.29.14')))) {
        subjectKeyId = der.read(parts[parts.length - 1]!.content).content;
      }
    }
  }
  return { subject, subjectKeyId, publicKeySpki: spki };
}

/** Go's net.ParseIP as the 4- or 16-byte form x509 stores; undefined when invalid. */
export function parseIp(text: string): Uint8Array | undefined {
  if (isIPv4(text)) return new Uint8Array(text.split('.').map(Number));
  if (!isIPv6(text) || text.includes('%')) return undefined;
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const expand = (part: string | undefined): number[] => {
    if (!part) return [];
    const out: number[] = [];
    for (const group of part.split(':')) {
      if (group.includes('.')) out.push(...group.split('.').map(Number));
      else out.push(parseInt(group, 16) >> 8, parseInt(group, 16) & 0xff);
    }
    return out;
  };
  const first = expand(head);
  const last = expand(tail);
  const bytes = [...first, ...new Array(16 - first.length - last.length).fill(0), ...last];
  const v4Mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return new Uint8Array(v4Mapped ? bytes.slice(12) : bytes);
}
