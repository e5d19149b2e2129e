// The API server's encryption-at-rest config: aescbc with one 32-byte key, then identity (so data
// written before encryption was on stays readable). The key is made once and kept until
// `encryption-config --rotate` replaces it (src/certs/encryption-rotation.ts), during which the
// config holds two keys: the first encrypts, every one decrypts.
import { randomBytes } from 'node:crypto';
import { parse, stringify } from 'yaml';

/** Bytes in an AES-256 key. */
export const KEY_BYTES = 32;

/** One aescbc key of the config: its name (key1, key2, ...) and its base64 secret (never printed). */
export interface EncryptionKey {
  name: string;
  secret: string;
}

/** Renders the EncryptionConfiguration for secrets with the given base64 key as `key1`. */
export function renderEncryptionConfig(keyBase64: string): string {
  return renderEncryptionKeys([{ name: 'key1', secret: keyBase64 }]);
}

/** Renders the EncryptionConfiguration for secrets with these aescbc keys, in order (the first encrypts). */
export function renderEncryptionKeys(keys: readonly EncryptionKey[]): string {
  return stringify({
    kind: 'EncryptionConfiguration',
    apiVersion: 'apiserver.config.k8s.io/v1',
    resources: [
      {
        resources: ['secrets'],
        providers: [{ aescbc: { keys: keys.map((k) => ({ name: k.name, secret: k.secret })) } }, { identity: {} }],
      },
    ],
  });
}

/** The aescbc keys for secrets of a config that encryptionConfigProblem accepts, in order. */
export function encryptionKeys(text: string): EncryptionKey[] {
  const d = parse(text) as { resources: { resources?: unknown; providers?: { aescbc?: { keys?: { name?: unknown; secret?: unknown }[] } }[] }[] };
  const secrets = d.resources.find((r) => Array.isArray(r.resources) && r.resources.includes('secrets'));
  return (secrets?.providers?.[0]?.aescbc?.keys ?? []).map((k) => ({ name: String(k.name), secret: String(k.secret) }));
}

/** A new random key, base64. */
export function newEncryptionKey(): string {
  return randomBytes(KEY_BYTES).toString('base64');
}

/**
 * Why an existing config is not one hardway can keep using, or undefined when it is (an aescbc
 * provider first with a 32-byte key). Never includes the key in the message.
 */
export function encryptionConfigProblem(text: string): string | undefined {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch {
    return 'it is not valid YAML';
  }
  const d = doc as { kind?: unknown; resources?: { resources?: unknown; providers?: { aescbc?: { keys?: { secret?: unknown }[] } }[] }[] };
  if (d?.kind !== 'EncryptionConfiguration') return 'its kind is not EncryptionConfiguration';
  const secrets = d.resources?.find((r) => Array.isArray(r.resources) && r.resources.includes('secrets'));
  const first = secrets?.providers?.[0]?.aescbc?.keys?.[0]?.secret;
  if (typeof first !== 'string') return 'it has no aescbc key for secrets as its first provider';
  if (Buffer.from(first, 'base64').length !== KEY_BYTES) return `its aescbc key is not ${KEY_BYTES} bytes`;
  return undefined;
}
