// Issue 24, items 1-3: no link inside the project leads a write, or a chmod, outside it. render
// --out, pki/ (certs, kubeconfigs) and logs/ refuse a link where they write (exit 2, naming it),
// and nothing lands on the link's target; render's directories are 0755 at most under any umask.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { certifiedProject, hardway, makeProject, snapshot } from './certs.helpers.ts';
import { fakeCluster, inventoryOf, projectDir, runCommand } from './engine.helpers.ts';
import { failedCleanly, filesUnder, outside } from './safety.helpers.ts';

const EC = 'keyAlgorithm: ecdsa-p256\n';
const mode = (p: string) => statSync(p).mode & 0o777;

/** Moves `dir/rel` to a directory outside the project and leaves a link to it in its place; returns where it went. */
function linkedOut(dir: string, rel: string): string {
  const elsewhere = join(outside(), basename(rel));
  renameSync(join(dir, rel), elsewhere);
  symlinkSync(elsewhere, join(dir, rel));
  return elsewhere;
}

describe('render --out never writes through a link (item 1)', () => {
  it('a linked file inside DIR: refused, its target untouched, nothing written', async () => {
    const p = makeProject();
    const out = join(p.dir, 'out');
    mkdirSync(join(out, 'server/etc'), { recursive: true });
    const victim = join(outside(), 'victim.txt');
    writeFileSync(victim, 'ORIGINAL\n');
    symlinkSync(victim, join(out, 'server/etc/hosts.hardway-block'));
    const run = await runCli(['render', '--out', 'out'], p.dir);
    failedCleanly(run, 2, `${join(out, 'server/etc/hosts.hardway-block')} is a symbolic link (to ${victim}): hardway never writes through a link`);
    expect(readFileSync(victim, 'utf8')).toBe('ORIGINAL\n');
    expect(filesUnder(out)).toEqual(['server/etc/hosts.hardway-block']);
  });

  it('a linked directory inside DIR: refused, nothing written into its target', async () => {
    const p = makeProject();
    const out = join(p.dir, 'out');
    mkdirSync(out);
    const target = outside();
    symlinkSync(target, join(out, 'node-0'));
    const run = await runCli(['render', '--out', 'out'], p.dir);
    failedCleanly(run, 2, `${join(out, 'node-0')} is a symbolic link (to ${target}), not a directory`);
    expect(filesUnder(target)).toEqual([]);
    expect(filesUnder(out)).toEqual(['node-0']);
  });

  it('under umask 000 its directories are 0755 (not 0777), its files get their own modes', async () => {
    const p = makeProject();
    const before = process.umask(0);
    try {
      const run = await runCli(['render', '--out', 'out'], p.dir);
      expect(run.code, run.stderr).toBe(0);
    } finally {
      process.umask(before);
    }
    for (const d of ['out', 'out/server', 'out/server/etc', 'out/node-0/etc/cni/net.d']) expect(mode(join(p.dir, d)).toString(8), d).toBe('755');
    expect(mode(join(p.dir, 'out/node-0/etc/containerd/config.toml')).toString(8)).toBe('644');
  });
});

describe('no write under pki/ leaves pki/ (item 2)', () => {
  it('a linked pki/machines/<host>: certs and kubeconfigs refuse it, nothing lands on its target, pki/ unchanged', async () => {
    const p = await certifiedProject();
    const target = outside();
    rmSync(join(p.dir, 'pki/machines/node-0'), { recursive: true });
    symlinkSync(target, join(p.dir, 'pki/machines/node-0'));
    const before = snapshot(p.dir);
    const certs = await hardway(p, 'certs');
    failedCleanly(certs, 2, `${join(p.dir, 'pki/machines/node-0')} is a symbolic link (to ${target}), not a directory`);
    expect(certs.stderr).toContain('never through a link');
    const kubeconfigs = await hardway(p, 'kubeconfigs');
    expect(kubeconfigs.code).not.toBe(0);
    expect(filesUnder(target)).toEqual([]);
    expect(snapshot(p.dir)).toEqual(before);
  });

  it('a linked pki/machines: refused before anything is read or written', async () => {
    const p = makeProject({ cluster: EC });
    mkdirSync(join(p.dir, 'pki'), { mode: 0o700 });
    const target = outside();
    symlinkSync(target, join(p.dir, 'pki/machines'));
    failedCleanly(await hardway(p, 'certs'), 2, `${join(p.dir, 'pki/machines')} is a symbolic link (to ${target}), not a directory`);
    expect(filesUnder(target)).toEqual([]);
    expect(existsSync(join(p.dir, 'pki/ca.key'))).toBe(false);
  });

  it('a file of pki/ that is a link is never written through (--renew replaces nothing outside)', async () => {
    const p = await certifiedProject();
    const elsewhere = linkedOut(p.dir, 'pki/admin.crt');
    const original = readFileSync(elsewhere, 'utf8');
    failedCleanly(await hardway(p, 'certs', '--renew', 'admin'), 2, `${join(p.dir, 'pki/admin.crt')} is a symbolic link (to ${elsewhere}): hardway never writes through a link`);
    expect(readFileSync(elsewhere, 'utf8')).toBe(original);
  });
});

describe('chmod never follows a link (item 3)', () => {
  it('a key of pki/ linked to a 0644 file outside: refused, the outside file keeps its mode', async () => {
    const p = await certifiedProject();
    const elsewhere = linkedOut(p.dir, 'pki/admin.key');
    chmodSync(elsewhere, 0o644);
    const run = await hardway(p, 'certs');
    failedCleanly(run, 2, `${join(p.dir, 'pki/admin.key')} is a symbolic link (to ${elsewhere}), whose target is mode 0644, must be 0600; hardway does not change a mode through a link`);
    expect(run.stdout).not.toContain('fixed mode');
    expect(mode(elsewhere).toString(8)).toBe('644');
  });

  it('a linked logs/: refused before the run, the target keeps its mode and gets no log', async () => {
    const dir = projectDir();
    const target = outside();
    const before = mode(target);
    symlinkSync(target, join(dir, 'logs'));
    const fakes = fakeCluster(inventoryOf());
    const run = await runCommand('pin-hosts', [], dir, fakes);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(`error: ${join(dir, 'logs')} is a symbolic link (to ${target}), not a directory`);
    expect(mode(target)).toBe(before);
    expect(filesUnder(target)).toEqual([]);
    for (const f of fakes.values()) expect(f.commands).toEqual([]);
    expect(filesUnder(dir)).toEqual(['logs', 'machines.txt']);
  });
});
