// Issue 24, items 1-3 for the two files hardway rewrites outside pki/, logs/ and render's tree:
// the known_hosts it pins host keys in and the checksum cache of downloads/. A link in either
// place, pointing outside the project, is never followed.
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.ts';
import { localFile } from '../../src/steps/support/binaries.ts';
import { KnownHosts } from '../../src/transport/known-hosts.ts';
import { key } from '../fixtures/ssh/test-server.ts';

/** The key blob of a fixture's .pub file (what a server presents). */
const blob = (pub: string) => Buffer.from(key(pub).toString('utf8').split(' ')[1]!, 'base64');
import { outside } from './safety.helpers.ts';
import { makeProject } from './certs.helpers.ts';

describe('the known_hosts pin file (item 1 for known_hosts)', () => {
  it('a link in its place is refused, naming it; its target is not appended to', () => {
    const p = makeProject();
    const target = join(outside(), 'authorized_keys');
    writeFileSync(target, 'ssh-ed25519 AAAA-the-outside-file\n');
    const file = join(p.dir, 'known_hosts');
    symlinkSync(target, file);
    const hosts = new KnownHosts(join(p.dir, 'missing-so-nothing-is-parsed'));
    Object.defineProperty(hosts, 'file', { value: file });
    const thrown = (() => {
      try {
        hosts.pin(['node-0'], blob('host_ed25519.pub'));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(InputError);
    expect((thrown as Error).message).toBe(`${file} is a symbolic link (to ${target}): hardway never writes through a link; nothing was written`);
    expect(readFileSync(target, 'utf8')).toBe('ssh-ed25519 AAAA-the-outside-file\n');
    expect(lstatSync(file).isSymbolicLink()).toBe(true);
  });

  it('a file of its own is appended to, 0644 when new', () => {
    const p = makeProject();
    const file = join(p.dir, 'known_hosts');
    const hosts = new KnownHosts(file);
    hosts.pin(['node-0'], blob('host_ed25519.pub'));
    hosts.pin(['node-1'], blob('host_rsa.pub'));
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(['node-0 ssh-ed25519', 'node-1 ssh-rsa', '']);
    expect(lstatSync(file).mode & 0o777).toBe(0o644);
    expect(new KnownHosts(file).verify(['node-1'], blob('host_rsa.pub'))).toEqual({ status: 'match' });
  });
});

describe('downloads/.sha256-cache.json (item 1 for the checksum cache)', () => {
  it('a link in its place is neither read nor rewritten: its target stays as it was, the digest is still right', async () => {
    const p = makeProject();
    const downloads = join(p.dir, 'downloads');
    mkdirSync(downloads);
    writeFileSync(join(downloads, 'etcd'), 'the etcd binary\n');
    const target = join(outside(), 'important.json');
    writeFileSync(target, '{"etcd": {"size": 16, "mtimeMs": 0, "sha256": "not-read"}}');
    symlinkSync(target, join(downloads, '.sha256-cache.json'));
    const file = await localFile(downloads, 'etcd');
    expect(file.sha256).toBe(createHash('sha256').update('the etcd binary\n').digest('hex'));
    expect(readFileSync(target, 'utf8')).toBe('{"etcd": {"size": 16, "mtimeMs": 0, "sha256": "not-read"}}');
    expect(lstatSync(join(downloads, '.sha256-cache.json')).isSymbolicLink()).toBe(true);
  });

  it('a file of its own is rewritten through a temp file and a rename (a new inode), holding the digest', async () => {
    const p = makeProject();
    const downloads = join(p.dir, 'downloads');
    mkdirSync(downloads);
    writeFileSync(join(downloads, 'kubelet'), 'the kubelet binary\n');
    writeFileSync(join(downloads, '.sha256-cache.json'), '{}');
    const before = lstatSync(join(downloads, '.sha256-cache.json')).ino;
    const file = await localFile(downloads, 'kubelet');
    const cache = JSON.parse(readFileSync(join(downloads, '.sha256-cache.json'), 'utf8'));
    expect(cache.kubelet.sha256).toBe(file.sha256);
    expect(lstatSync(join(downloads, '.sha256-cache.json')).ino).not.toBe(before);
  });
});
