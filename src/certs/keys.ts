// Private keys: generated with node:crypto (native, and off the main thread on libuv's pool, so
// many keys are made in parallel), stored as PKCS#8 PEM.
import { generateKeyPair, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { KeyAlgorithm } from '../cluster-settings.ts';

const generate = promisify(generateKeyPair);

/** A key pair as hardway holds it: the private key object and its PKCS#8 PEM text. */
export interface KeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
  pem: string;
}

/** Generates one key pair of the given algorithm without blocking the event loop. */
export async function generateKey(algorithm: KeyAlgorithm): Promise<KeyPair> {
  const { privateKey, publicKey } =
    algorithm === 'ecdsa-p256'
      ? await generate('ec', { namedCurve: 'prime256v1' })
      : await generate('rsa', { modulusLength: algorithm === 'rsa-2048' ? 2048 : 4096 });
  return { privateKey, publicKey, pem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}

/** A key pair from PEM text (PKCS#8, PKCS#1 or SEC1), e.g. a key file or a test fixture. */
export function keyFromPem(pem: string): KeyPair {
  const privateKey = createPrivateKey(pem);
  return { privateKey, publicKey: createPublicKey(privateKey), pem };
}

/** Which of hardway's key algorithms a key is, or a description of what it is instead. */
export function algorithmOf(key: KeyObject): KeyAlgorithm | string {
  const d = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa' && (d.modulusLength === 2048 || d.modulusLength === 4096)) {
    return `rsa-${d.modulusLength}` as KeyAlgorithm;
  }
  if (key.asymmetricKeyType === 'ec' && d.namedCurve === 'prime256v1') return 'ecdsa-p256';
  return `${key.asymmetricKeyType}${d.modulusLength ?? ''}${d.namedCurve ? `-${d.namedCurve}` : ''}`;
}

/** The DER SubjectPublicKeyInfo of a key, which goes into a certificate as is. */
export function spki(key: KeyObject): Buffer {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return pub.export({ type: 'spki', format: 'der' });
}
