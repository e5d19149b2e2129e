// Issue 34, items 1 to 3: the files and URLs cluster.yaml names. A registry mirror's CA bundle
// holds certificates only, every PEM block checked, and only they reach the machines; a URL with a
// user name or password is refused with file and line, shown masked, and never printed; every
// path read from cluster.yaml is a regular file of bounded size, so /dev/zero or a named pipe is
// refused at once instead of eating memory or blocking for ever.
import { spawn, execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadClusterSettings, parseClusterSettings } from '../../src/cluster-settings.ts';
import { InputError } from '../../src/errors.ts';
import { certificatesOnly } from '../../src/registry-settings.ts';
import { hasCredentials, maskCredentials } from '../../src/url.ts';
import { fetchVerified } from '../../src/download/fetch.ts';
import { NO_PROGRESS } from '../../src/download/progress.ts';
import { unwrapErrors } from '../helpers/unwrap.ts';

const ROOT = join(import.meta.dirname, '../..');
const CA = readFileSync(join(ROOT, 'test/fixtures/registries/mirror-ca.crt'), 'utf8');
const KEY = readFileSync(join(ROOT, 'test/fixtures/keys/leaf-ec.key'), 'utf8');
const OTHER_CA = execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', '/dev/null',
  '-subj', '/CN=second test CA', '-days', '30'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

/** A project directory with `files` in it; cluster.yaml `text` parsed there (its files checked). */
function parseIn(text: string, files: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'hw-named-'));
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
  return { dir, parse: () => parseClusterSettings(text, join(dir, 'cluster.yaml'), { dir }) };
}

/** The InputError of parsing, as `line: message`, with its hint. */
function refusal(fn: () => unknown): { said: string; hint?: string } {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    return { said: `${e.where?.line}: ${e.message}`, hint: e.hint };
  }
  throw new Error('accepted');
}

const mirrorWithCa = (ca: string) => `registries:\n  docker.io:\n    mirrors:\n      - url: https://mirror.example.com\n        ca: ${ca}\n`;
const CA_KEY = 'registries.docker.io.mirrors[0].ca';

describe('a mirror\'s CA file holds certificates only (item 1)', () => {
  it('a certificate followed by a private key (a crt and key concatenated) is refused with file and line; the key is never shown', () => {
    const { parse } = parseIn(mirrorWithCa('bundle.pem'), { 'bundle.pem': CA + KEY });
    const r = refusal(parse);
    const keyLine = CA.split('\n').length;
    expect(r.said).toBe(`5: ${CA_KEY}: bundle.pem holds a PRIVATE KEY (its line ${keyLine}), not only certificates: refused, nothing of it goes to the machines`);
    expect(`${r.said}${r.hint}`).not.toContain(KEY.split('\n')[1]);
  });

  it.each([
    ['a key before the certificate', () => KEY + CA, 'holds a PRIVATE KEY (its line 1)'],
    ['an EC key in the middle of a bundle', () => `${CA}-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n${OTHER_CA}`, 'holds a EC PRIVATE KEY'],
    ['an OpenSSH key at the end', () => `${CA}-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n`, 'holds a OPENSSH PRIVATE KEY'],
    ['a certificate request', () => `${CA}-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n`, 'holds a CERTIFICATE REQUEST'],
    ['a second certificate that does not parse', () => `${CA}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`, 'has a certificate (its line'],
    ['a certificate without its END line', () => CA.replace('-----END CERTIFICATE-----\n', ''), 'without its END line'],
    ['no certificate at all', () => 'hello\n', 'is not a PEM certificate'],
  ])('%s: refused', (_what, body, said) => {
    expect(refusal(parseIn(mirrorWithCa('bundle.pem'), { 'bundle.pem': body() }).parse).said).toContain(said);
  });

  it('a bundle of two CAs with comments around them is accepted, and only the certificates, re-encoded, are kept for the machines', () => {
    const bundle = `# the mirror's CAs\n${CA}\nsome text openssl x509 -text prints\n${OTHER_CA}`;
    const settings = parseIn(mirrorWithCa('bundle.pem'), { 'bundle.pem': bundle }).parse();
    const pem = settings.registries!['docker.io']!.mirrors[0]!.ca!.pem;
    expect(pem).toBe(CA + OTHER_CA);
    expect(pem).not.toContain('#');
    expect(certificatesOnly(bundle)).toEqual({ pem: CA + OTHER_CA });
  });
});

describe('credentials in URLs are refused and never printed (item 2)', () => {
  it('dns.source with user:token@ is refused with file and line, the URL masked', () => {
    const r = refusal(parseIn('dns:\n  enabled: true\n  source: https://alice:s3cr3t-token@files.example.com/coredns-1.8.3.tar.gz\n').parse);
    expect(r.said).toBe('3: dns.source: https://***@files.example.com/coredns-1.8.3.tar.gz carries a user name or password: refused');
    expect(`${r.said}${r.hint}`).not.toMatch(/s3cr3t|alice/);
  });

  it('a registry mirror\'s url with user:password is refused masked; a malformed one does not echo the password either', () => {
    const r = refusal(parseIn('registries:\n  docker.io:\n    mirrors:\n      - url: https://bob:hunter2@mirror.example.com\n').parse);
    expect(r.said).toBe('4: registries.docker.io.mirrors[0].url: https://***@mirror.example.com carries a user name or password: refused');
    const odd = refusal(parseIn('registries:\n  docker.io:\n    mirrors:\n      - url: ftp//x https://bob:hunter2@mirror.example.com\n').parse);
    expect(odd.said).not.toContain('hunter2');
    const big = refusal(parseIn('clusterDomain: "https://bob:hunter2@x"\n').parse);
    expect(big.said).not.toContain('hunter2');
  });

  it('the mask: every URL of a text, the password whatever it holds', () => {
    expect(maskCredentials('see https://u:p@ss@h.example/x and http://only-user@h:80/ ok')).toBe('see https://***@h.example/x and http://***@h:80/ ok');
    expect(hasCredentials('https://h.example/a@b')).toBe(false);
    expect(hasCredentials('https://u@h.example/')).toBe(true);
  });

  it('a download error names the URL without its password', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'hw-cache-'));
    const err = await fetchVerified({ url: 'http://carol:pa55word@127.0.0.1:9/x.tar.gz', algorithm: 'sha256', hex: '0'.repeat(64) }, cache, NO_PROGRESS).then(() => new Error("downloaded"), (e: unknown) => e as Error);
    expect(err.message).toContain('url: http://***@127.0.0.1:9/x.tar.gz');
    expect(err.message).not.toContain('pa55word');
  });
});

describe('every path cluster.yaml names is a regular file of bounded size (item 3)', () => {
  const fifo = (dir: string, name: string) => {
    execFileSync('mkfifo', [join(dir, name)]);
    return join(dir, name);
  };

  it.each([
    ['a mirror\'s ca', (p: string) => mirrorWithCa(p), 5, `${CA_KEY}: PATH`],
    ['ssh.configFile', (p: string) => `ssh:\n  configFile: ${p}\n`, 2, 'ssh.configFile: PATH'],
    ['ssh.identityFile', (p: string) => `ssh:\n  identityFile: ${p}\n`, 2, 'identity file PATH (ssh.identityFile)'],
    ['ssh.knownHosts', (p: string) => `ssh:\n  knownHosts: ${p}\n`, 2, 'ssh.knownHosts: PATH'],
  ])('%s: /dev/zero is a device and a named pipe a named pipe, refused with file and line', (_what, yaml, line, subject) => {
    expect(refusal(parseIn(yaml('/dev/zero')).parse).said).toBe(`${line}: ${subject.replace('PATH', '/dev/zero')} is a device, not a file`);
    const dir = mkdtempSync(join(tmpdir(), 'hw-fifo-'));
    const pipe = fifo(dir, 'pipe');
    expect(refusal(() => parseClusterSettings(yaml(pipe), join(dir, 'cluster.yaml'), { dir })).said).toBe(`${line}: ${subject.replace('PATH', pipe)} is a named pipe, not a file`);
  });

  it('cluster.yaml itself: a file of 17 MiB is refused by its size, not read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-big-'));
    writeFileSync(join(dir, 'cluster.yaml'), `# ${'x'.repeat(17 * 1024 * 1024)}\n`);
    expect(refusal(() => loadClusterSettings(join(dir, 'cluster.yaml'), 'cluster.yaml')).said).toBe('undefined: cluster.yaml is 17 MiB, more than the 16 MiB hardway reads of such a file');
  });

  it('a CA file bigger than any CA bundle is refused by its size, before it is read', () => {
    const { parse } = parseIn(mirrorWithCa('huge.pem'), { 'huge.pem': CA + 'x'.repeat(2 * 1024 * 1024) });
    expect(refusal(parse).said).toBe(`5: ${CA_KEY}: huge.pem is 2 MiB, more than the 1 MiB hardway reads of such a file`);
  });

  it('hardway inventory with ca: a named pipe returns at once with exit 2, file and line (it used to block for ever)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-fifo-cli-'));
    writeFileSync(join(dir, 'machines.txt'), '10.240.0.10 server.kubernetes.local server\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24\n');
    writeFileSync(join(dir, 'cluster.yaml'), mirrorWithCa('ca.pipe'));
    fifo(dir, 'ca.pipe');
    copyFileSync(join(ROOT, 'test/fixtures/registries/mirror-ca.crt'), join(dir, 'unused.crt'));
    const started = Date.now();
    const child = spawn(process.execPath, [join(ROOT, 'bin/hardway.mjs'), 'inventory'], {
      cwd: dir, env: { PATH: process.env.PATH, HOME: dir, HARDWAY_NO_BUNDLE: '1' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    clearTimeout(killer);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(code).toBe(2);
    expect(unwrapErrors(stderr)).toContain(`error: cluster.yaml:5: ${CA_KEY}: ca.pipe is a named pipe, not a file`);
  }, 30_000);
});
