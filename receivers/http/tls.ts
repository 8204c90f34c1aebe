/**
 * The `tls` block of an `http` server: schema, validation and the certificate material the server
 * loads. TLS is on only when a certificate and a key are given; an empty block leaves the server
 * on plain HTTP, as the reference does.
 *
 * Deliberate differences from the reference (which follows its documentation here only in part):
 * giving both the PEM and the file form of the certificate or of the key is rejected instead of
 * the file silently winning, and a block that sets only one of certificate and key, or asks for
 * client authentication without them, is rejected instead of silently serving plain HTTP.
 */
import { readFileSync, statSync } from 'node:fs';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { t, type NestedBlockSpec } from '../../lib/config/schema.js';

/** How the server treats client certificates (the reference's names). */
export type ClientAuthType =
  | 'NoClientCert'
  | 'RequestClientCert'
  | 'RequireAnyClientCert'
  | 'VerifyClientCertIfGiven'
  | 'RequireAndVerifyClientCert';

/** PEM text given inline or a file that holds it. */
export type PemSource = { readonly pem: string } | { readonly file: string };

export interface TlsServerConfig {
  readonly cert: PemSource;
  readonly key: PemSource;
  readonly clientAuth: ClientAuthType;
  readonly clientCa?: PemSource;
  /** OpenSSL cipher list for TLS 1.2 and older; absent = the runtime's defaults. */
  readonly ciphers?: string;
  readonly minVersion?: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
}

export const tlsBlockSpec: NestedBlockSpec = {
  doc: 'Serves HTTPS with this certificate and key, optionally authenticating clients by certificate.',
  fields: {
    cert_pem: { kind: t.string, default: '', doc: 'Server certificate (PEM). Mutually exclusive with cert_file.' },
    cert_file: { kind: t.string, default: '', doc: 'File holding the server certificate. Mutually exclusive with cert_pem.' },
    key_pem: { kind: t.string, default: '', doc: 'Server private key (PEM). Mutually exclusive with key_file.' },
    key_file: { kind: t.string, default: '', doc: 'File holding the server private key. Mutually exclusive with key_pem.' },
    client_auth_type: {
      kind: t.string,
      default: '',
      doc: 'NoClientCert (default), RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven or RequireAndVerifyClientCert.',
    },
    client_ca: { kind: t.string, default: '', doc: 'CA certificates (PEM) that client certificates are verified against.' },
    client_ca_file: { kind: t.string, default: '', doc: 'File holding the client CA certificates; wins over client_ca.' },
    cipher_suites: { kind: t.any, default: [], doc: 'Allowed TLS 1.2 cipher suites by their Go names (list or comma-separated string).' },
    min_version: {
      kind: t.string,
      default: '',
      doc: 'Oldest TLS version accepted: VersionTLS10 … VersionTLS13 (TLS10 … TLS13 also accepted).',
    },
  },
};

const CLIENT_AUTH: Readonly<Record<string, ClientAuthType>> = {
  '': 'NoClientCert',
  NoClientCert: 'NoClientCert',
  RequestClientCert: 'RequestClientCert',
  RequireAnyClientCert: 'RequireAnyClientCert',
  // Kept by the reference for backwards compatibility.
  RequireClientCert: 'RequireAnyClientCert',
  VerifyClientCertIfGiven: 'VerifyClientCertIfGiven',
  RequireAndVerifyClientCert: 'RequireAndVerifyClientCert',
};

const VERSIONS: Readonly<Record<string, NonNullable<TlsServerConfig['minVersion']>>> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
  TLS10: 'TLSv1',
  TLS11: 'TLSv1.1',
  TLS12: 'TLSv1.2',
  TLS13: 'TLSv1.3',
};

/** Go cipher suite names and their OpenSSL equivalents. */
const CIPHERS: Readonly<Record<string, string>> = {
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA256: 'AES128-SHA256',
};

/**
 * Validates a decoded `tls` block. `fail(reason, attribute)` records each problem; the result is
 * undefined when the block configures no TLS (or when it failed).
 */
export function resolveTls(
  values: Record<string, unknown>,
  fail: (reason: string, attribute: string) => void,
): TlsServerConfig | undefined {
  const str = (name: string) => (values[name] as string | undefined) ?? '';
  const errorsBefore = { count: 0 };
  const report = (reason: string, attribute: string) => {
    errorsBefore.count++;
    fail(reason, attribute);
  };

  const cert = pemSource(str('cert_pem'), str('cert_file'), 'cert_pem', 'cert_file', report);
  const key = pemSource(str('key_pem'), str('key_file'), 'key_pem', 'key_file', report);
  const clientCaFile = str('client_ca_file');
  const clientCaPem = str('client_ca');
  const clientCa: PemSource | undefined = clientCaFile ? { file: clientCaFile } : clientCaPem ? { pem: clientCaPem } : undefined;

  const clientAuth = CLIENT_AUTH[str('client_auth_type')];
  if (clientAuth === undefined) report(`invalid ClientAuth: ${str('client_auth_type')}`, 'client_auth_type');
  if (clientCa && clientAuth === 'NoClientCert')
    report("client CA's have been configured without a Client Auth Policy", clientCaFile ? 'client_ca_file' : 'client_ca');

  let minVersion: TlsServerConfig['minVersion'];
  if (str('min_version') !== '') {
    minVersion = VERSIONS[str('min_version')];
    if (!minVersion) report(`unknown TLS version: ${str('min_version')}`, 'min_version');
  }
  const ciphers = cipherList(values.cipher_suites, report);

  const wantsTls =
    cert !== undefined || key !== undefined || (clientAuth !== undefined && clientAuth !== 'NoClientCert') || clientCa !== undefined;
  if (!wantsTls) return undefined;
  if (cert === undefined && str('cert_pem') === '' && str('cert_file') === '') report('missing one of cert_pem or cert_file', 'cert_pem');
  if (key === undefined && str('key_pem') === '' && str('key_file') === '') report('missing one of key_pem or key_file', 'key_pem');
  if (errorsBefore.count > 0 || !cert || !key || !clientAuth) return undefined;

  const config: TlsServerConfig = {
    cert,
    key,
    clientAuth,
    ...(clientCa ? { clientCa } : {}),
    ...(ciphers ? { ciphers } : {}),
    ...(minVersion ? { minVersion } : {}),
  };
  try {
    loadTlsMaterial(config);
  } catch (err) {
    report((err as Error).message, attributeOf(err));
    return undefined;
  }
  return config;
}

function pemSource(
  pem: string,
  file: string,
  pemName: string,
  fileName: string,
  report: (reason: string, attribute: string) => void,
): PemSource | undefined {
  if (pem !== '' && file !== '') {
    report(`${pemName} and ${fileName} are mutually exclusive`, fileName);
    return undefined;
  }
  if (file !== '') return { file };
  if (pem !== '') return { pem };
  return undefined;
}

function cipherList(value: unknown, report: (reason: string, attribute: string) => void): string | undefined {
  let names: string[];
  if (typeof value === 'string') names = value.split(',');
  else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) names = value as string[];
  else {
    report('cipher_suites must be a list of strings', 'cipher_suites');
    return undefined;
  }
  names = names.map((n) => n.trim()).filter((n) => n !== '');
  if (names.length === 0) return undefined;
  const openssl: string[] = [];
  for (const name of names) {
    const mapped = CIPHERS[name];
    if (!mapped) report(`unknown cipher: ${name}`, 'cipher_suites');
    else openssl.push(mapped);
  }
  return openssl.join(':');
}

class TlsMaterialError extends Error {
  constructor(
    message: string,
    readonly attribute: string,
  ) {
    super(message);
  }
}

function attributeOf(err: unknown): string {
  return err instanceof TlsMaterialError ? err.attribute : 'cert_pem';
}

function readPem(source: PemSource, attribute: string): Buffer {
  if ('pem' in source) return Buffer.from(source.pem);
  try {
    return readFileSync(source.file);
  } catch (err) {
    throw new TlsMaterialError(`failed to read ${attribute} (${source.file}): ${(err as Error).message}`, attribute);
  }
}

/** The certificate, key and client CA a TLS server uses, read now (files included). */
export function loadTlsMaterial(config: TlsServerConfig): SecureContextOptions {
  const cert = readPem(config.cert, 'file' in config.cert ? 'cert_file' : 'cert_pem');
  const key = readPem(config.key, 'file' in config.key ? 'key_file' : 'key_pem');
  const options: SecureContextOptions = { cert, key };
  if (config.clientCa) options.ca = readPem(config.clientCa, 'file' in config.clientCa ? 'client_ca_file' : 'client_ca');
  if (config.ciphers) options.ciphers = config.ciphers;
  if (config.minVersion) options.minVersion = config.minVersion;
  try {
    createSecureContext(options);
  } catch (err) {
    throw new TlsMaterialError(`failed to load X509KeyPair: ${(err as Error).message}`, 'cert_pem');
  }
  return options;
}

/** A fingerprint of the files a config reads; it changes when one of them is rewritten. */
export function tlsFilesStamp(config: TlsServerConfig): string {
  const files = [config.cert, config.key, config.clientCa].flatMap((s) => (s && 'file' in s ? [s.file] : []));
  return files
    .map((file) => {
      try {
        const st = statSync(file);
        return `${file}:${st.mtimeMs}:${st.size}`;
      } catch {
        return `${file}:missing`;
      }
    })
    .join('|');
}

/** Whether the server asks for a client certificate, and whether the TLS layer itself must verify it. */
export function clientCertPolicy(clientAuth: ClientAuthType): { requestCert: boolean; rejectUnauthorized: boolean } {
  switch (clientAuth) {
    case 'NoClientCert':
      return { requestCert: false, rejectUnauthorized: false };
    case 'RequireAndVerifyClientCert':
      return { requestCert: true, rejectUnauthorized: true };
    default:
      // Requested-but-optional and any-certificate modes are enforced after the handshake.
      return { requestCert: true, rejectUnauthorized: false };
  }
}
