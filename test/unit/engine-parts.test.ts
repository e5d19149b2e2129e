// The engine's small parts: unified diffs, file comparison, redaction, the concurrency helper,
// the facts protocol over a real shell (the local transport).
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unifiedDiff } from '../../src/engine/diff.ts';
import { changesForFile, contentSha256 } from '../../src/engine/desired.ts';
import { shellProbe, TEST_PROBES } from './facts.helpers.ts';
import { createFacts } from '../../src/engine/facts.ts';
import { mapLimit } from '../../src/engine/fanout.ts';
import { Redactor } from '../../src/ui/redact.ts';
import { LocalTransport } from '../../src/transport/local.ts';
import { sh } from '../../src/shell.ts';

describe('unifiedDiff', () => {
  const labels = { old: 'a', new: 'b' };
  it('is empty for equal texts and shows a whole new file against /dev/null', () => {
    expect(unifiedDiff('x\n', 'x\n', labels)).toBe('');
    expect(unifiedDiff('', 'one\ntwo\n', labels)).toBe('--- a\n+++ b\n@@ -0,0 +1,2 @@\n+one\n+two');
  });
  it('keeps three lines of context and splits distant changes into hunks', () => {
    const old = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n') + '\n';
    const neu = old.replace('l2\n', 'L2\n').replace('l17\n', '');
    expect(unifiedDiff(old, neu, labels)).toBe(
      ['--- a', '+++ b', '@@ -1,6 +1,6 @@', ' l0', ' l1', '-l2', '+L2', ' l3', ' l4', ' l5', '@@ -15,6 +15,5 @@', ' l14', ' l15', ' l16', '-l17', ' l18', ' l19'].join('\n'),
    );
  });
  it('marks a missing final newline', () => {
    expect(unifiedDiff('a\n', 'a', labels)).toBe('--- a\n+++ b\n@@ -1,1 +1,1 @@\n-a\n+a\n\\ No newline at end of file');
  });
});

describe('changesForFile', () => {
  const want = { path: '/etc/x', content: Buffer.from('x\n'), mode: 0o640, owner: 'root:adm' };
  const sha = contentSha256(want.content);
  it('uploads a missing or different file, and fixes only mode/owner when content matches', () => {
    expect(changesForFile(want, { path: '/etc/x', exists: false })[0]).toMatchObject({ kind: 'put', reason: 'missing' });
    expect(changesForFile(want, { path: '/etc/x', exists: true, sha256: 'beef', mode: 0o640, owner: 'root:adm' })[0]).toMatchObject({ kind: 'put', reason: 'content differs' });
    const fix = changesForFile(want, { path: '/etc/x', exists: true, sha256: sha, mode: 0o644, owner: 'root:root' });
    expect(fix.map((c) => (c.kind === 'exec' ? `${c.cmd.text} (${c.reason})` : c.kind))).toEqual([
      'chmod 0640 /etc/x (mode is 0644, want 0640)',
      'chown root:adm /etc/x (owner is root:root, want root:adm)',
    ]);
    expect(changesForFile(want, { path: '/etc/x', exists: true, sha256: sha, mode: 0o100640, owner: 'root:adm' })).toEqual([]);
  });
});

describe('Redactor', () => {
  it('hides private keys, key data, registered secrets and their token lines', () => {
    const r = new Redactor();
    r.add('apiVersion: v1\nsecret: c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTIzNDU2Nzg=\n');
    const text = [
      '-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----',
      '    client-key-data: LS0tLS1CRUdJTiBSU0E=',
      'the key is c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTIzNDU2Nzg= here',
      'apiVersion: v1',
    ].join('\n');
    expect(r.redact(text)).toBe(['[REDACTED RSA PRIVATE KEY]', '    client-key-data: [REDACTED]', 'the key is [REDACTED] here', 'apiVersion: v1'].join('\n'));
  });
});

describe('Redactor with overlapping and many secrets', () => {
  it('hides every part of overlapping occurrences and finds each of thousands of secrets', () => {
    const r = new Redactor();
    r.add('AAAAAAAAxxxxxxxx12345678');
    r.add('xxxx12345678yyyyyyyyyyyy');
    expect(r.redact('<AAAAAAAAxxxxxxxx12345678yyyyyyyyyyyy>')).toBe('<[REDACTED]>');
    const keys = Array.from({ length: 3000 }, (_, i) => `K${String(i).padStart(4, '0')}${'Z'.repeat(40)}`);
    for (const k of keys) r.add(k);
    expect(r.redact(`a ${keys[2999]} b ${keys[7]} c`)).toBe('a [REDACTED] b [REDACTED] c');
    expect(r.redact('nothing secret in this line')).toBe('nothing secret in this line');
  });
});

describe('Redactor at every position of a text', () => {
  it('finds a secret wherever it starts (first character, middle, last possible), after any characters, non-ASCII among them', () => {
    const r = new Redactor();
    const secret = 'dG9rZW4tdG9rZW4tdG9rZW4t';
    r.add(secret);
    for (const filler of ['', 'x', 'é€😀', 'a b\nc\td']) {
      for (let at = 0; at <= 20; at++) {
        const before = filler.repeat(at);
        expect(r.redact(`${before}${secret}`)).toBe(`${before}[REDACTED]`);
        expect(r.redact(`${before}${secret}!`)).toBe(`${before}[REDACTED]!`);
      }
    }
    // A text that holds the secret's prefix but not the whole secret keeps it.
    expect(r.redact(`${secret.slice(0, 12)}`)).toBe(secret.slice(0, 12));
  });
});

describe('Redactor and names in secret files', () => {
  it('keeps component names that appear in a secret kubeconfig visible in other lines', () => {
    const r = new Redactor();
    r.add('users:\n- name: kube-controller-manager\n  user:\n    client-key-data: ' + 'QUJD'.repeat(20) + '\n');
    expect(r.redact('systemctl restart kube-controller-manager')).toBe('systemctl restart kube-controller-manager');
    expect(r.redact('key ' + 'QUJD'.repeat(20))).toBe('key [REDACTED]');
  });
});

describe('mapLimit', () => {
  it('keeps input order whatever the completion order', async () => {
    expect(await mapLimit([30, 10, 20], 2, async (ms) => new Promise<number>((r) => setTimeout(() => r(ms), ms)))).toEqual([30, 10, 20]);
  });
});

describe('facts over a real shell', () => {
  it('stats, reads and probes many things in one command', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-facts-'));
    writeFileSync(join(dir, 'a b'), 'hello\n');
    chmodSync(join(dir, 'a b'), 0o640);
    mkdirSync(join(dir, 'sub'));
    const t = new LocalTransport({ machine: 'jumpbox' });
    let execs = 0;
    const counting = { ...t, machine: t.machine, exec: (c: Parameters<typeof t.exec>[0], o?: Parameters<typeof t.exec>[1]) => (execs++, t.exec(c, o)), upload: t.upload.bind(t), close: t.close.bind(t) };
    const facts = createFacts(counting, undefined, { probes: TEST_PROBES });
    const [stat, read, missing, sub, probe, failed, line, bare, two, empty] = await facts.batch([
      { op: 'S', path: join(dir, 'a b') },
      { op: 'R', path: join(dir, 'a b') },
      { op: 'S', path: join(dir, "it's") },
      { op: 'R', path: join(dir, 'sub') },
      shellProbe.ask(sh`printf '%s\n\n' ${"it's"}; read x || echo no-stdin`),
      shellProbe.ask(sh`exit 7`),
      shellProbe.ask(sh`printf ':one line\n'`),
      shellProbe.ask(sh`printf ';no newline'`),
      shellProbe.ask(sh`printf 'two\nlines\n'; printf 'multi\nline ${'$'}x' >&2`),
      shellProbe.ask(sh`printf '\n'`),
    ]);
    expect(execs).toBe(1);
    expect(stat).toMatchObject({ exists: true, mode: 0o640, size: 6, sha256: contentSha256(Buffer.from('hello\n')) });
    expect((read as { content: Buffer }).content.toString()).toBe('hello\n');
    expect(missing).toMatchObject({ exists: false });
    expect(sub).toMatchObject({ exists: true, notFile: true });
    expect(probe).toEqual({ code: 0, stdout: "it's\n\nno-stdin\n" });
    expect(failed).toEqual({ code: 7, stdout: '' });
    // One-line answers travel as they are, others in base64: the same stdout either way.
    expect(line).toEqual({ code: 0, stdout: ':one line\n' });
    expect(bare).toEqual({ code: 0, stdout: ';no newline' });
    expect(two).toEqual({ code: 0, stdout: 'two\nlines\n' });
    expect(empty).toEqual({ code: 0, stdout: '\n' });
  });
});

describe('uploadBatches', () => {
  it('groups consecutive uploads and keeps every command alone, in order', async () => {
    const { uploadBatches } = await import('../../src/engine/host-run.ts');
    const { sh } = await import('../../src/shell.ts');
    const put = (path: string) => ({ kind: 'put' as const, path, content: Buffer.from(''), mode: 0o644, reason: 'missing' });
    const run = (t: string) => ({ kind: 'exec' as const, cmd: sh`${t}`, reason: 'r' });
    const shape = uploadBatches([put('a'), put('b'), run('x'), put('c'), run('y'), run('z')]).map((b) => b.map((c) => (c.kind === 'put' ? c.path : c.cmd.text)));
    expect(shape).toEqual([['a', 'b'], ['x'], ['c'], ['y'], ['z']]);
  });
});
