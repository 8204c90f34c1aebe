/**
 * sprig v3.3.0 hashing, randomness and crypto functions on node:crypto: sha1/sha256/sha512,
 * adler32, bcrypt/htpasswd, derivePassword (Master Password with scrypt), AES-256-CBC
 * encrypt/decrypt, uuidv4, randBytes, private-key generation and X.509 certificate generation
 * (genCA, genSelfSignedCert, genSignedCert and their `…WithKey` forms, buildCustomCert).
 */
import {
  X509Certificate,
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  generateKeyPairSync,
  randomBytes,
  randomUUID,
  type KeyObject,
} from 'node:crypto';
import { BudgetExceededError, currentMeter, TIMED_OUT } from '../budget.js';
import { GoError } from '../errors.js';
import { defineFunc, type FuncMap } from '../func.js';
import { Sprintf } from '../gofmt.js';
import { type GoInt, GoObject, T_INT, T_SLICE_ANY, T_STRING, T_UINT32, utf8Bytes, type GoType } from '../values.js';
import { bcryptHash } from './bcrypt.js';
import { derivePasswordKey, generateSlowKey, type SlowKeyKind } from './helper-thread.js';
import { sliceBoundsError } from './convert.js';
import { base64Decode } from './sprig-encoding.js';
import {
  KEY_USAGE_CERT_SIGN,
  KEY_USAGE_DIGITAL_SIGNATURE,
  KEY_USAGE_KEY_ENCIPHERMENT,
  createCertificate,
  parseIp,
  parseIssuer,
  parsePrivateKeyPem,
  pemDecode,
  pemEncode,
  pemForKey,
  type CertificateTemplate,
  type Issuer,
} from './x509.js';

const S = T_STRING;
const T_CERTIFICATE: GoType = { name: 'sprig.certificate', kind: 'struct' };

/** sprig's `certificate` struct: PEM certificate and key in fields `Cert` and `Key`. */
export class Certificate extends GoObject {
  readonly goType = T_CERTIFICATE;
  constructor(
    readonly cert: string,
    readonly key: string,
  ) {
    super();
  }
  override field(name: string): { value: unknown } | undefined {
    if (name === 'Cert') return { value: this.cert };
    if (name === 'Key') return { value: this.key };
    return undefined;
  }
  override fields(): readonly (readonly [string, unknown])[] {
    return [
      ['Cert', this.cert],
      ['Key', this.key],
    ];
  }
}

const hex = (algorithm: string, input: string): string => createHash(algorithm).update(utf8Bytes(input)).digest('hex');

function adler32(input: string): string {
  let a = 1;
  let b = 0;
  for (const byte of utf8Bytes(input)) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return String(((b << 16) | a) >>> 0);
}

function bcrypt(input: string): string {
  try {
    // Its rounds take a tenth of a second or more: the render's time is checked between them.
    return bcryptHash(utf8Bytes(input), undefined, undefined, () => currentMeter().checkTime());
  } catch (err) {
    if (err instanceof BudgetExceededError) throw err;
    return `failed to encrypt string with bcrypt: ${(err as Error).message}`;
  }
}

function randBytes(count: GoInt): string {
  const n = Number(count.value);
  if (n < 0) throw new GoError('runtime error: makeslice: len out of range');
  currentMeter().checkBytes(4 * Math.ceil(n / 3));
  return randomBytes(n).toString('base64');
}

// ---------------------------------------------------------------------------------------------
// derivePassword (Master Password algorithm)

const MASTER_PASSWORD_SEED = 'com.lyndir.masterpassword';

const PASSWORD_TEMPLATES: Readonly<Record<string, readonly string[]>> = {
  maximum: ['anoxxxxxxxxxxxxxxxxx', 'axxxxxxxxxxxxxxxxxno'],
  long: [
    'CvcvnoCvcvCvcv',
    'CvcvCvcvnoCvcv',
    'CvcvCvcvCvcvno',
    'CvccnoCvcvCvcv',
    'CvccCvcvnoCvcv',
    'CvccCvcvCvcvno',
    'CvcvnoCvccCvcv',
    'CvcvCvccnoCvcv',
    'CvcvCvccCvcvno',
    'CvcvnoCvcvCvcc',
    'CvcvCvcvnoCvcc',
    'CvcvCvcvCvccno',
    'CvccnoCvccCvcv',
    'CvccCvccnoCvcv',
    'CvccCvccCvcvno',
    'CvcvnoCvccCvcc',
    'CvcvCvccnoCvcc',
    'CvcvCvccCvccno',
    'CvccnoCvcvCvcc',
    'CvccCvcvnoCvcc',
    'CvccCvcvCvccno',
  ],
  medium: ['CvcnoCvc', 'CvcCvcno'],
  short: ['Cvcn'],
  basic: ['aaanaaan', 'aannaaan', 'aaannaaa'],
  pin: ['nnnn'],
};

const TEMPLATE_CHARACTERS: Readonly<Record<string, string>> = {
  V: 'AEIOU',
  C: 'BCDFGHJKLMNPQRSTVWXYZ',
  v: 'aeiou',
  c: 'bcdfghjklmnpqrstvwxyz',
  A: 'AEIOUBCDFGHJKLMNPQRSTVWXYZ',
  a: 'AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz',
  n: '0123456789',
  o: "@&%?,=[]_:-+*$#!'^~;()/.",
  x: 'AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()',
};

function uint32be(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

function derivePassword(counter: GoInt, passwordType: string, password: string, user: string, site: string): string {
  const templates = PASSWORD_TEMPLATES[passwordType];
  if (templates === undefined || !Object.hasOwn(PASSWORD_TEMPLATES, passwordType)) {
    return `cannot find password template ${passwordType}`;
  }
  const userBytes = Buffer.from(utf8Bytes(user));
  const siteBytes = Buffer.from(utf8Bytes(site));
  const seedBytes = Buffer.from(MASTER_PASSWORD_SEED);
  const salt = Buffer.concat([seedBytes, uint32be(userBytes.length), userBytes]);
  const passwordBytes = utf8Bytes(password);
  const key = currentMeter().uninterruptible('scrypt', (msLeft) => derivePasswordKey(passwordBytes, salt, msLeft) ?? TIMED_OUT);
  const message = Buffer.concat([seedBytes, uint32be(siteBytes.length), siteBytes, uint32be(Number(counter.value))]);
  const seed = createHmac('sha256', key).update(message).digest();
  const template = templates[seed[0]! % templates.length]!;
  let out = '';
  for (let i = 0; i < template.length; i++) {
    const chars = TEMPLATE_CHARACTERS[template[i]!]!;
    out += chars[seed[i + 1]! % chars.length];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// AES

function aesKey(password: string): Buffer {
  const key = Buffer.alloc(32);
  Buffer.from(utf8Bytes(password)).copy(key, 0, 0, 32);
  return key;
}

function encryptAES(password: string, plaintext: string): string {
  if (plaintext === '') return '';
  const content = Buffer.from(utf8Bytes(plaintext));
  const padding = 16 - (content.length % 16);
  const padded = Buffer.concat([content, Buffer.alloc(padding, padding)]);
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', aesKey(password), iv).setAutoPadding(false);
  return Buffer.concat([iv, cipher.update(padded), cipher.final()]).toString('base64');
}

function decryptAES(password: string, crypt64: string): string {
  if (crypt64 === '') return '';
  let crypt: Buffer;
  try {
    crypt = Buffer.from(base64Decode(crypt64));
  } catch (err) {
    throw new GoError((err as Error).message);
  }
  if (crypt.length < 16) throw sliceBoundsError(`[:16] with capacity ${crypt.length}`);
  const iv = crypt.subarray(0, 16);
  const body = crypt.subarray(16);
  if (body.length % 16 !== 0) throw new GoError('crypto/cipher: input not full blocks');
  const decipher = createDecipheriv('aes-256-cbc', aesKey(password), iv).setAutoPadding(false);
  const decrypted = Buffer.concat([decipher.update(body), decipher.final()]);
  if (decrypted.length === 0) throw new GoError('runtime error: index out of range [-1]');
  const cut = decrypted.length - decrypted[decrypted.length - 1]!;
  if (cut < 0) throw sliceBoundsError(`[:${cut}]`);
  return new TextDecoder().decode(decrypted.subarray(0, cut));
}

// ---------------------------------------------------------------------------------------------
// Keys and certificates

/**
 * A key that takes long to make: on a helper thread, waited for at most the time the render has
 * left, and not started when the last one took longer than that.
 */
function slowKey(kind: SlowKeyKind): KeyObject {
  return currentMeter().uninterruptible(`key ${kind}`, (msLeft) => generateSlowKey(kind, msLeft) ?? TIMED_OUT);
}

function generateKey(type: string): KeyObject {
  switch (type) {
    case '':
    case 'rsa':
      return slowKey('rsa-4096');
    case 'dsa':
      return slowKey('dsa-2048');
    case 'ecdsa':
      return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    case 'ed25519':
      return generateKeyPairSync('ed25519').privateKey;
  }
  throw new Error('unknown key type');
}

function genPrivateKey(type: string): string {
  if (!['', 'rsa', 'dsa', 'ecdsa', 'ed25519'].includes(type)) return 'Unknown type ' + type;
  try {
    return pemForKey(generateKey(type));
  } catch (err) {
    if (err instanceof BudgetExceededError) throw err;
    return `failed to generate private key: ${(err as Error).message}`;
  }
}

const rsa2048 = (): KeyObject => slowKey('rsa-2048');

function ipList(ips: unknown[] | null): Uint8Array[] {
  return (ips ?? []).map((ip) => {
    if (typeof ip !== 'string') throw new GoError(`error parsing ip: ${Sprintf('%v', ip)} is not a string`);
    const parsed = parseIp(ip);
    if (parsed === undefined) throw new GoError(`error parsing ip: ${ip}`);
    return parsed;
  });
}

function dnsList(names: unknown[] | null): string[] {
  return (names ?? []).map((dns) => {
    if (typeof dns !== 'string') {
      throw new GoError(`error processing alternate dns name: ${Sprintf('%v', dns)} is not a string`);
    }
    return dns;
  });
}

function baseTemplate(cn: string, ips: unknown[] | null, dns: unknown[] | null, daysValid: GoInt): CertificateTemplate {
  return {
    commonName: cn,
    ipAddresses: ipList(ips),
    dnsNames: dnsList(dns),
    daysValid: Number(daysValid.value),
    keyUsage: KEY_USAGE_KEY_ENCIPHERMENT | KEY_USAGE_DIGITAL_SIGNATURE,
    isCA: false,
  };
}

function certAndKey(template: CertificateTemplate, signee: KeyObject, issuer: Issuer | 'self', signer: KeyObject): Certificate {
  let certDer: Uint8Array;
  try {
    // Signing with a large key from the data takes long.
    certDer = currentMeter().uninterruptible('certificate', () => createCertificate(template, signee, issuer, signer));
  } catch (err) {
    if (err instanceof BudgetExceededError) throw err;
    throw new GoError(`error creating certificate: ${(err as Error).message}`);
  }
  return new Certificate(pemEncode('CERTIFICATE', certDer), pemForKey(signee));
}

function keyFromPem(pem: string): KeyObject {
  try {
    return parsePrivateKeyPem(pem);
  } catch (err) {
    throw new GoError(`parsing private key: ${(err as Error).message}`);
  }
}

function genCA(cn: string, daysValid: GoInt, key: KeyObject = rsa2048()): Certificate {
  const template = { ...baseTemplate(cn, null, null, daysValid), isCA: true };
  const caTemplate = { ...template, keyUsage: template.keyUsage | KEY_USAGE_CERT_SIGN };
  return certAndKey(caTemplate, key, 'self', key);
}

function genSelfSigned(
  cn: string,
  ips: unknown[] | null,
  dns: unknown[] | null,
  daysValid: GoInt,
  key: KeyObject = rsa2048(),
): Certificate {
  return certAndKey(baseTemplate(cn, ips, dns, daysValid), key, 'self', key);
}

function genSigned(
  cn: string,
  ips: unknown[] | null,
  dns: unknown[] | null,
  daysValid: GoInt,
  ca: Certificate,
  key?: KeyObject,
): Certificate {
  const issuer = parseIssuer(ca.cert);
  let signer: KeyObject;
  try {
    signer = parsePrivateKeyPem(ca.key);
  } catch (err) {
    throw new GoError(`error parsing private key: ${(err as Error).message}`);
  }
  const template = baseTemplate(cn, ips, dns, daysValid);
  return certAndKey(template, key ?? rsa2048(), issuer, signer);
}

function buildCustomCert(b64cert: string, b64key: string): Certificate {
  let cert: Uint8Array;
  let key: Uint8Array;
  try {
    cert = base64Decode(b64cert);
  } catch {
    throw new GoError('unable to decode base64 certificate');
  }
  try {
    key = base64Decode(b64key);
  } catch {
    throw new GoError('unable to decode base64 private key');
  }
  const certText = new TextDecoder().decode(cert);
  const keyText = new TextDecoder().decode(key);
  const block = pemDecode(certText);
  if (block === undefined) throw new GoError('unable to decode certificate');
  try {
    new X509Certificate(Buffer.from(block.bytes));
  } catch (err) {
    throw new GoError(`error parsing certificate: decodedCert.Bytes: ${(err as Error).message}`);
  }
  try {
    parsePrivateKeyPem(keyText);
  } catch (err) {
    throw new GoError(`error parsing private key: ${(err as Error).message}`);
  }
  return new Certificate(certText, keyText);
}

const L = T_SLICE_ANY;

/** sprig's crypto, hashing and randomness functions. */
export const sprigCryptoFuncs: FuncMap = {
  sha1sum: defineFunc([S], (input: string) => hex('sha1', input)),
  sha256sum: defineFunc([S], (input: string) => hex('sha256', input)),
  sha512sum: defineFunc([S], (input: string) => hex('sha512', input)),
  adler32sum: defineFunc([S], adler32),
  bcrypt: defineFunc([S], bcrypt),
  htpasswd: defineFunc([S, S], (username: string, password: string) =>
    username.includes(':') ? `invalid username: ${username}` : `${username}:${bcrypt(password)}`,
  ),
  randBytes: defineFunc([T_INT], randBytes),
  uuidv4: defineFunc([], () => randomUUID()),
  derivePassword: defineFunc([T_UINT32, S, S, S, S], derivePassword),
  encryptAES: defineFunc([S, S], encryptAES),
  decryptAES: defineFunc([S, S], decryptAES),
  genPrivateKey: defineFunc([S], genPrivateKey),
  buildCustomCert: defineFunc([S, S], buildCustomCert),
  genCA: defineFunc([S, T_INT], (cn: string, days: GoInt) => genCA(cn, days)),
  genCAWithKey: defineFunc([S, T_INT, S], (cn: string, days: GoInt, pem: string) => genCA(cn, days, keyFromPem(pem))),
  genSelfSignedCert: defineFunc([S, L, L, T_INT], (cn: string, ips: unknown[] | null, dns: unknown[] | null, days: GoInt) =>
    genSelfSigned(cn, ips, dns, days),
  ),
  genSelfSignedCertWithKey: defineFunc(
    [S, L, L, T_INT, S],
    (cn: string, ips: unknown[] | null, dns: unknown[] | null, days: GoInt, pem: string) =>
      genSelfSigned(cn, ips, dns, days, keyFromPem(pem)),
  ),
  genSignedCert: defineFunc(
    [S, L, L, T_INT, T_CERTIFICATE],
    (cn: string, ips: unknown[] | null, dns: unknown[] | null, days: GoInt, ca: Certificate) => genSigned(cn, ips, dns, days, ca),
  ),
  genSignedCertWithKey: defineFunc(
    [S, L, L, T_INT, T_CERTIFICATE, S],
    (cn: string, ips: unknown[] | null, dns: unknown[] | null, days: GoInt, ca: Certificate, pem: string) =>
      genSigned(cn, ips, dns, days, ca, keyFromPem(pem)),
  ),
};
