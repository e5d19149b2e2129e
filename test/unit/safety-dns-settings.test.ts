// Issue 34, items 10 and 11: dns.image is read as containerd reads an image reference (no
// upper-case repository path, a registry port from 1 to 65535, a long value echoed cut after 60
// characters), and dns.source is found where the docs say: `~/` is the home directory, a file URL
// an absolute path, and a link to nothing is named with cluster.yaml's file and line.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseClusterSettings } from '../../src/cluster-settings.ts';
import { NO_PROGRESS } from '../../src/download/progress.ts';
import { InputError } from '../../src/errors.ts';
import { imageRefProblem } from '../../src/image-ref.ts';
import { caddyDeb, corednsSourceArchive, type InputOptions } from '../../src/images/coredns-inputs.ts';
import { runCli } from '../helpers/cli.ts';
import { refusedSettings } from '../helpers/cluster-yaml.ts';

const work = mkdtempSync(join(tmpdir(), 'hardway-dns-settings-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const refused = refusedSettings;

describe('dns.image as containerd reads it (issue 34, item 10)', () => {
  it.each([
    ['UPPER/case', '"UPPER" is not a registry (no "." or ":port", not localhost), so it starts the repository path, which is lower-case'],
    ['Hardway/coredns:1.8.3', '"Hardway" is not a registry'],
    ['registry:99999/x', 'port "99999" of registry "registry" is not a port number (1 to 65535)'],
    ['registry.example:0/coredns:1.8.3', 'port "0" of registry "registry.example" is not a port number'],
    ['localhost:123456/x', 'port "123456" of registry "localhost" is not a port number'],
  ])('%s is refused at its line, saying why', (ref, why) => {
    const e = refused(`apiPort: 6443\ndns:\n  image: ${JSON.stringify(ref)}\n`);
    expect(e).toBeInstanceOf(InputError);
    expect(e.where).toEqual({ file: 'cluster.yaml', line: 3 });
    expect(e.message).toContain(`dns.image: expected an image reference like registry.k8s.io/pause:3.6, got ${JSON.stringify(ref)}: ${why}`);
  });

  it('takes what containerd takes: lower-case paths, a registry with a "." or a port or localhost (its name in any case), ports 1 to 65535', () => {
    for (const ref of [
      'coredns', 'coredns/coredns:1.8.3', 'registry.k8s.io/coredns/coredns:v1.8.0', 'localhost/hardway/coredns:1.8.3', 'localhost:5001/hardway/web:1',
      'myregistry:5000/x', 'Registry.Example.com/coredns:1.8.3', 'registry.example:65535/x', 'registry.example:1/x', `coredns@sha256:${'a'.repeat(64)}`,
    ]) {
      expect(imageRefProblem(ref), ref).toBeUndefined();
      expect(parseClusterSettings(`dns:\n  image: ${JSON.stringify(ref)}\n`, 'cluster.yaml').dns.image).toBe(ref);
    }
  });

  it('a 5,000-character reference is echoed cut after 60 characters with its length, by the CLI too', async () => {
    const ref = `registry.example/${'a'.repeat(5000 - 'registry.example/'.length)}`;
    const e = refused(`dns:\n  image: ${ref}\n`);
    expect(e.message).toBe(`dns.image: expected an image reference like registry.k8s.io/pause:3.6, got "${ref.slice(0, 60)}..." (5000 characters): longer than 255 characters`);
    const dir = mkdtempSync(join(work, 'cli-'));
    writeFileSync(join(dir, 'machines.txt'), '10.240.0.10 server.kubernetes.local server\n');
    writeFileSync(join(dir, 'cluster.yaml'), `dns:\n  image: ${ref}\n`);
    const run = await runCli(['inventory'], dir);
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe(`error: ${join(dir, 'cluster.yaml')}:2: ${e.message}`);
    expect(run.stderr.length).toBeLessThan(600);
  });

  it('sandboxImage is read the same way', () => {
    expect(refused('sandboxImage: registry:99999/pause:3.6\n').message).toContain('port "99999" of registry "registry" is not a port number');
  });
});

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const ARCHIVE = Buffer.from('a stand-in for coredns-1.8.3.tar.gz\n');
const CADDY = Buffer.from('a stand-in for the caddy .deb\n');
const archivePin = { name: 'coredns-1.8.3.tar.gz', sha256: sha(ARCHIVE) };
const caddyPin = { name: 'golang-github-coredns-caddy-dev_1.1.1-1_all.deb', sha256: sha(CADDY), pool: 'pool/main/g/x.deb' };

/** A project whose cluster.yaml names `source` on line 3, with a cache and a home directory of its own. */
function project(source: string): InputOptions & { home: string } {
  const dir = mkdtempSync(join(work, 'p-'));
  const clusterFile = join(dir, 'cluster.yaml');
  writeFileSync(clusterFile, `apiPort: 6443\ndns:\n  source: ${JSON.stringify(source)}\n`);
  const home = join(dir, 'home');
  mkdirSync(home);
  // The mirror is a port nothing listens on: a test that reached it would fail, not hang.
  return { projectDir: dir, source, clusterFile, clusterShown: 'cluster.yaml', cache: join(dir, 'cache'), progress: NO_PROGRESS, mirror: 'http://127.0.0.1:9', archivePin, caddyPin, home };
}

describe('dns.source where the docs say it is (issue 34, item 11)', () => {
  it('~/x.tar.gz is in the home directory, and the caddy .deb is looked for beside it', async () => {
    const o = project('~/coredns/coredns-1.8.3.tar.gz');
    mkdirSync(join(o.home, 'coredns'));
    writeFileSync(join(o.home, 'coredns/coredns-1.8.3.tar.gz'), ARCHIVE);
    writeFileSync(join(o.home, 'coredns', caddyPin.name), CADDY);
    const got = await corednsSourceArchive(o);
    expect(got.said).toBe(`CoreDNS v1.8.3 source archive: copied into the cache from ${join(o.home, 'coredns/coredns-1.8.3.tar.gz')}, sha256 verified`);
    expect((await caddyDeb(o)).said).toContain(`copied into the cache from ${join(o.home, 'coredns', caddyPin.name)}`);
    expect(readdirSync(o.projectDir)).not.toContain('~');
  });

  it('file:///abs/path is that absolute file, not a relative path named "file:"', async () => {
    const elsewhere = mkdtempSync(join(work, 'elsewhere-'));
    writeFileSync(join(elsewhere, 'coredns-1.8.3.tar.gz'), ARCHIVE);
    const o = project(`file://${join(elsewhere, 'coredns-1.8.3.tar.gz')}`);
    expect((await corednsSourceArchive(o)).said).toContain(`copied into the cache from ${join(elsewhere, 'coredns-1.8.3.tar.gz')}`);
    const local = project(`file://localhost${join(elsewhere, 'coredns-1.8.3.tar.gz')}`);
    expect((await corednsSourceArchive(local)).said).toContain(`copied into the cache from ${join(elsewhere, 'coredns-1.8.3.tar.gz')}`);
  });

  it('a file URL with another host is refused at its line', async () => {
    const o = project('file://fileserver/share/coredns-1.8.3.tar.gz');
    const e = (await corednsSourceArchive(o).catch((x: unknown) => x)) as InputError;
    expect(e).toBeInstanceOf(InputError);
    expect(e.message).toBe('dns.source: "file://fileserver/share/coredns-1.8.3.tar.gz" is not a file URL of this machine');
    expect(e.where).toEqual({ file: 'cluster.yaml', line: 3 });
  });

  it('a link to nothing is named with cluster.yaml\'s file and line', async () => {
    const o = project('coredns-1.8.3.tar.gz');
    symlinkSync('/nonexistent/coredns-1.8.3.tar.gz', join(o.projectDir, 'coredns-1.8.3.tar.gz'));
    const e = (await corednsSourceArchive(o).catch((x: unknown) => x)) as InputError;
    expect(e).toBeInstanceOf(InputError);
    expect(e.message).toBe(`${join(o.projectDir, 'coredns-1.8.3.tar.gz')} is a symbolic link to /nonexistent/coredns-1.8.3.tar.gz, which does not exist`);
    expect(e.where).toEqual({ file: 'cluster.yaml', line: 3 });
  });
});
