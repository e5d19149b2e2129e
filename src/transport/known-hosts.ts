// A project-local known_hosts in OpenSSH format: plain or hashed (`|1|salt|hash`) host patterns,
// wildcards and negations, `[host]:port` for ports other than 22, and @revoked markers.
import { createHash, createHmac } from 'node:crypto';
import { closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, writeSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import { InputError } from '../errors.ts';
import { displayPath, pathError } from '../input-file.ts';
import { describeEntry, lstatOrNothing } from '../output-file.ts';

/** One usable key line of known_hosts. */
export interface KnownHostEntry {
  patterns: string;
  marker?: '@revoked' | '@cert-authority';
  keyType: string;
  key: Buffer;
  line: number;
}

/** What known_hosts says about a presented key for a set of names. */
export type HostKeyVerdict =
  | { status: 'match' }
  | { status: 'unknown' }
  | { status: 'revoked' }
  | { status: 'changed'; pinned: Buffer[] };

/** OpenSSH-style fingerprint of a public key blob: `SHA256:` + unpadded base64 of its SHA-256. */
export function fingerprint(key: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(key).digest('base64').replace(/=+$/, '');
}

/** The key type written inside an SSH public key blob (e.g. ssh-ed25519). */
export function keyTypeOf(key: Buffer): string {
  if (key.length < 4) return '';
  const len = key.readUInt32BE(0);
  return key.subarray(4, 4 + len).toString('latin1');
}

/** The names a host is looked up by in known_hosts: bare for port 22, `[name]:port` otherwise. */
export function hostKeyNames(names: string[], port: number): string[] {
  const unique = [...new Set(names.filter((n) => n !== ''))];
  return port === 22 ? unique : unique.map((n) => `[${n}]:${port}`);
}

/** A known_hosts file loaded into memory; pins are appended to the file and remembered. */
export class KnownHosts {
  private entries: KnownHostEntry[];

  constructor(readonly file: string) {
    this.entries = existsSync(file) ? parseKnownHosts(readFileSync(file, 'utf8'), file) : [];
  }

  /** Pinned keys (not revoked, not CA) for any of the names. */
  keysFor(names: string[]): Buffer[] {
    return this.entries.filter((e) => !e.marker && matchesAny(e.patterns, names)).map((e) => e.key);
  }

  /** Key types pinned for any of the names, so the client can ask the server for those first. */
  keyTypesFor(names: string[]): string[] {
    return [...new Set(this.keysFor(names).map((k) => keyTypeOf(k)))];
  }

  /** Compares a presented key blob with what is pinned for the names. */
  verify(names: string[], key: Buffer): HostKeyVerdict {
    const revoked = this.entries.some((e) => e.marker === '@revoked' && e.key.equals(key));
    if (revoked) return { status: 'revoked' };
    const pinned = this.keysFor(names);
    if (pinned.length === 0) return { status: 'unknown' };
    if (pinned.some((k) => k.equals(key))) return { status: 'match' };
    return { status: 'changed', pinned };
  }

  /** Appends `names keytype base64` to the file (created 0644 if missing, never through a link) and remembers it. */
  pin(names: string[], key: Buffer): void {
    const type = keyTypeOf(key);
    const patterns = names.join(',');
    mkdirSync(dirname(this.file), { recursive: true });
    const existing = existsSync(this.file) ? readFileSync(this.file, 'utf8') : '';
    const sep = existing === '' || existing.endsWith('\n') ? '' : '\n';
    appendNoFollow(this.file, `${sep}${patterns} ${type} ${key.toString('base64')}\n`);
    this.entries.push({ patterns, keyType: type, key, line: 0 });
  }
}

/**
 * Appends a line to known_hosts (created 0644), never through a link in its place (O_NOFOLLOW): a
 * link there pointing outside the project would otherwise have hardway, maybe as root, append to
 * its target. One write per line with O_APPEND: parallel pins of different machines never interleave.
 */
function appendNoFollow(file: string, line: string): void {
  const st = lstatOrNothing(file);
  const refuse = (s: Stats) => new InputError(`${describeEntry(file, s)}: hardway never writes through a link; nothing was written`,
    'make known_hosts a file of its own (copy the target over the link), or point ssh.knownHosts in cluster.yaml at the file itself');
  if (st?.isSymbolicLink()) throw refuse(st);
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
    writeSync(fd, line);
  } catch (e) {
    const now = lstatOrNothing(file);
    if (now?.isSymbolicLink()) throw refuse(now); // made between the check and the open
    throw pathError(e, displayPath(file)) ?? e;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Parses known_hosts text; a line that is not `[marker] patterns keytype base64 [comment]` is an input error. */
export function parseKnownHosts(text: string, file: string): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const content = raw.trim();
    if (content === '' || content.startsWith('#')) return;
    const fields = content.split(/\s+/);
    let marker: KnownHostEntry['marker'];
    if (fields[0]!.startsWith('@')) {
      const m = fields.shift()!;
      if (m !== '@revoked' && m !== '@cert-authority') {
        throw new InputError(`unknown marker "${m}"`, 'known_hosts markers are @revoked and @cert-authority', { file, line: i + 1 });
      }
      marker = m;
    }
    const [patterns, keyType, b64] = fields;
    const key = b64 && /^[A-Za-z0-9+/]+={0,2}$/.test(b64) ? Buffer.from(b64, 'base64') : undefined;
    if (!patterns || !keyType || !key || keyTypeOf(key) !== keyType) {
      throw new InputError('not a known_hosts line ("HOSTS KEYTYPE BASE64-KEY")',
        'fix or delete the line; hardway pins new machines itself with --accept-new-host-keys', { file, line: i + 1 });
    }
    entries.push({ patterns, marker, keyType, key, line: i + 1 });
  });
  return entries;
}

/** True if the comma-separated pattern list matches one of the names and no negation excludes it. */
function matchesAny(patterns: string, names: string[]): boolean {
  if (patterns.startsWith('|1|')) return names.some((n) => hashedMatch(patterns, n));
  return names.some((name) => {
    let matched = false;
    for (const p of patterns.split(',')) {
      const negated = p.startsWith('!');
      if (!globMatch(negated ? p.slice(1) : p, name)) continue;
      if (negated) return false;
      matched = true;
    }
    return matched;
  });
}

function hashedMatch(entry: string, name: string): boolean {
  const [, , salt, hash] = entry.split('|');
  if (!salt || !hash) return false;
  const digest = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64');
  return digest === hash;
}

/** Compiled wildcard patterns: every connection looks its names up in every line (1+100: 10^5 matches). */
const globs = new Map<string, RegExp>();

function globMatch(pattern: string, name: string): boolean {
  if (!/[*?]/.test(pattern)) return pattern.toLowerCase() === name.toLowerCase();
  let re = globs.get(pattern);
  if (!re) {
    const source = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
    globs.set(pattern, (re = new RegExp(`^${source}$`, 'i')));
  }
  return re.test(name);
}
