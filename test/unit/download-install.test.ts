// Installing staged files into downloads/ (unchanged files untouched, stale ones removed, files
// hardway never installed kept) and the progress display (bar on a TTY, lines otherwise).
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installFiles, makeStaging, dropStaging, type StagedFile } from '../../src/download/install.ts';
import { readDownloads } from '../../src/download/layout.ts';
import { createProgress } from '../../src/download/progress.ts';
import { FailureError } from '../../src/errors.ts';

let project: string;
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'hardway-install-'));
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

const source = { kind: 'release' as const, url: 'http://127.0.0.1/x', digest: 'sha256:00', checksumSource: 'test' };

async function install(files: Record<string, string>) {
  const staging = await makeStaging(project);
  try {
    const staged: StagedFile[] = Object.entries(files).map(([path, body], i) => {
      const p = join(staging, String(i));
      writeFileSync(p, body, { mode: 0o600 });
      return { staged: p, path, component: 'etcd', version: 'v1', source };
    });
    return await installFiles(project, staged, { source: 'release', arch: 'amd64', missing: [] });
  } finally {
    await dropStaging(staging);
  }
}

describe('installFiles', () => {
  it('installs 0755, leaves identical files alone, replaces changed ones, removes what it installed before', async () => {
    const first = await install({ 'controller/etcd': 'e1', 'client/etcdctl': 'c1' });
    expect(first.installed.sort()).toEqual(['client/etcdctl', 'controller/etcd']);
    expect(statSync(join(project, 'downloads/controller/etcd')).mode & 0o777).toBe(0o755);
    const mtime = statSync(join(project, 'downloads/controller/etcd')).mtimeMs;
    // A stand-in copied in by hand (never in manifest.json) must survive every install.
    writeFileSync(join(project, 'downloads/controller/kube-apiserver'), 'stand-in');

    const second = await install({ 'controller/etcd': 'e1', 'worker/runc': 'r1' });
    expect(second.unchanged).toEqual(['controller/etcd']);
    expect(second.installed).toEqual(['worker/runc']);
    expect(second.removed).toEqual(['client/etcdctl']);
    expect(statSync(join(project, 'downloads/controller/etcd')).mtimeMs).toBe(mtime);
    expect(existsSync(join(project, 'downloads/client/etcdctl'))).toBe(false);
    expect(readFileSync(join(project, 'downloads/controller/kube-apiserver'), 'utf8')).toBe('stand-in');
    expect(readDownloads(project)!.files.map((f) => f.path)).toEqual(['controller/etcd', 'worker/runc']);

    chmodSync(join(project, 'downloads/worker/runc'), 0o700);
    const third = await install({ 'controller/etcd': 'e2', 'worker/runc': 'r1' });
    expect(third.installed.sort()).toEqual(['controller/etcd', 'worker/runc']);
    expect(readFileSync(join(project, 'downloads/controller/etcd'), 'utf8')).toBe('e2');
    expect(statSync(join(project, 'downloads/worker/runc')).mode & 0o777).toBe(0o755);
    const fourth = await install({ 'controller/etcd': 'e2', 'worker/runc': 'r1' });
    expect(fourth.installed).toEqual([]);
    expect(fourth.manifestChanged).toBe(false);
  });

  it('an unreadable downloads/manifest.json is reported by readDownloads with a hint to rerun', () => {
    mkdirSync(join(project, 'downloads'));
    writeFileSync(join(project, 'downloads/manifest.json'), '{not json');
    expect(() => readDownloads(project)).toThrow(FailureError);
    expect(() => readDownloads(project)).toThrow(/manifest.json is not valid JSON/);
  });
});

describe('download progress', () => {
  const capture = (isTTY: boolean) => {
    const s = Object.assign(new PassThrough(), { isTTY });
    let text = '';
    s.on('data', (d) => (text += d));
    return { s, text: () => text };
  };

  it('draws a bar with percentage on a terminal', () => {
    const { s, text } = capture(true);
    let t = 0;
    const p = createProgress(s, () => (t += 200));
    p.start('kube-server.tar.gz', 4 * 1024 * 1024);
    p.advance(2 * 1024 * 1024);
    p.advance(2 * 1024 * 1024);
    p.end();
    expect(text()).toContain('\r');
    expect(text()).toContain('50%');
    expect(text()).toContain('[########################] 100% 4.0 MB/4.0 MB');
    expect(text().endsWith('\n')).toBe(true);
  });

  it('writes one plain line per download otherwise', () => {
    const { s, text } = capture(false);
    const p = createProgress(s);
    p.start('runc.amd64', 12_000_000);
    p.advance(6_000_000);
    p.end();
    expect(text()).toBe('  downloading runc.amd64 (11.4 MB)\n');
  });
});
