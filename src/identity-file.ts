// The one check of an SSH identity file, for -i and for ssh.identityFile in cluster.yaml alike:
// it exists, is a file, and holds a private key, before any connection. Here rather than in
// transport/ so that reading cluster.yaml does not load ssh2 unless an identity file is named.
import { createRequire } from 'node:module';
import type { ParsedKey } from 'ssh2';
import { InputError, type Location } from './errors.ts';
import { namedFile, readNamedFile } from './input-file.ts';

type ParseKey = (data: Buffer) => ParsedKey | ParsedKey[] | Error;

/** ssh2's key parser, loaded on first use (ssh2 is CommonJS: require gives its `utils`). */
function parseKey(data: Buffer): ReturnType<ParseKey> {
  const ssh2 = createRequire(import.meta.url)('ssh2') as { utils: { parseKey: ParseKey } };
  return ssh2.utils.parseKey(data);
}

/**
 * Checks one identity file before any connection: it exists, is a file, and holds a private key
 * (a passphrase-protected one is fine: ssh-agent may hold it). A public key given as the private
 * one, a directory, or anything else is an InputError (exit 2) naming it and where it came from
 * (`from`: "-i", "ssh.identityFile"), at `where` (cluster.yaml and its line) when given.
 */
export function checkIdentityFile(path: string, from: string, where?: Location, moreHint = ''): void {
  const hint = `give the private key (e.g. ~/.ssh/id_ed25519, not the .pub beside it) whose public key is in the machines' authorized_keys${moreHint}`;
  const refuse = (what: string) => new InputError(`identity file ${path} (${from}) ${what}`, hint, where);
  // A pipe or /dev/zero is refused before it is opened; a key is a few kilobytes.
  if (namedFile(`identity file ${path} (${from})`, path, hint, where) === undefined) throw refuse('not found');
  const parsed = parseKey(readNamedFile(`identity file ${path} (${from})`, path, hint, where));
  if (parsed instanceof Error) {
    if (/encrypt|passphrase/i.test(parsed.message)) return;
    throw refuse(`is not a private key (${parsed.message})`);
  }
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (key && !key.isPrivateKey()) throw refuse('is a public key, not a private one');
}
