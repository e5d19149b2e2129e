// Paths that are not what they must be (machines.txt or cluster.yaml a directory, --machines DIR,
// pki a file or a link to nothing, a certificate's place taken by a directory): exit 2 and one
// error line naming the path and the problem (then its hint), never a stack trace, nothing changed.
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatError } from '../../src/errors.ts';
import { pathError } from '../../src/input-file.ts';
import { runCli, type CliRun } from '../helpers/cli.ts';
import { EXAMPLE_MACHINES, hardway, makeProject } from './certs.helpers.ts';
import { fakeCluster, inventoryOf, runCommand } from './engine.helpers.ts';

const EC = 'keyAlgorithm: ecdsa-p256\n';

/** Exit 2, the first line is `error: <text>`, a hint follows, no stack trace. */
function refused(run: CliRun, text: string): void {
  expect(run.code, run.stderr).toBe(2);
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines[0]).toBe(`error: ${text}`);
  expect(lines.slice(1).every((l) => l.startsWith('  hint: '))).toBe(true);
  expect(run.stderr).not.toMatch(/internal error|\n\s+at /);
}

describe('bad paths are input errors', () => {
  it('machines.txt is a directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-paths-'));
    mkdirSync(join(dir, 'machines.txt'));
    for (const cmd of ['inventory', 'certs']) refused(await runCli([cmd, '--machines', join(dir, 'machines.txt')], dir), `${join(dir, 'machines.txt')} is a directory, not a file`);
  });

  it('--machines names a directory', async () => {
    const p = makeProject();
    refused(await runCli(['certs', '--machines', p.dir], p.dir), `${p.dir} is a directory, not a file`);
    refused(await runCli(['pin-hosts', '--machines', p.dir], p.dir), `${p.dir} is a directory, not a file`);
    refused(await runCli(['download', '--arch', 'amd64', '--machines', p.dir], p.dir), `${p.dir} is a directory, not a file`);
  });

  it('cluster.yaml is a directory, or a link to nothing', async () => {
    const p = makeProject();
    mkdirSync(join(p.dir, 'cluster.yaml'));
    refused(await hardway(p, 'inventory'), `${join(p.dir, 'cluster.yaml')} is a directory, not a file`);
    const q = makeProject();
    symlinkSync('/nonexistent/cluster.yaml', join(q.dir, 'cluster.yaml'));
    refused(await hardway(q, 'inventory'), `${join(q.dir, 'cluster.yaml')} is a symbolic link to /nonexistent/cluster.yaml, which does not exist`);
  });

  it('pki is a link to nothing: every pki/ command says so', async () => {
    const p = makeProject({ cluster: EC });
    symlinkSync('/nonexistent/pki', join(p.dir, 'pki'));
    for (const cmd of [['certs'], ['certs', 'check'], ['kubeconfigs'], ['encryption-config']]) {
      refused(await hardway(p, ...cmd), `${join(p.dir, 'pki')} is a symbolic link to /nonexistent/pki, which does not exist`);
    }
  });

  it('pki is a file: refused and left as it was (not made 0700)', async () => {
    const p = makeProject({ cluster: EC });
    writeFileSync(join(p.dir, 'pki'), 'not a directory\n', { mode: 0o644 });
    for (const cmd of [['certs'], ['certs', 'check'], ['kubeconfigs'], ['encryption-config']]) {
      refused(await hardway(p, ...cmd), `${join(p.dir, 'pki')} is a file, not a directory`);
    }
    expect(statSync(join(p.dir, 'pki')).mode & 0o777).toBe(0o644);
    const fakes = fakeCluster(inventoryOf());
    const run = await runCommand('distribute', [], p.dir, fakes);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`error: ${join(p.dir, 'pki')} is a file, not a directory`);
  });

  it("a directory where a certificate belongs (the new place, or the earlier layout's pki/node-1.crt)", async () => {
    const p = makeProject({ cluster: EC });
    expect((await hardway(p, 'certs')).code).toBe(0);
    const crt = join(p.dir, 'pki/machines/node-1/kubelet.crt');
    rmSync(crt);
    mkdirSync(crt);
    refused(await hardway(p, 'certs'), `${crt} is a directory, not a file`);
    refused(await hardway(p, 'certs', 'check'), `${crt} is a directory, not a file`);
    refused(await hardway(p, 'kubeconfigs'), `${crt} is a directory, not a file`);

    const q = makeProject({ cluster: EC });
    mkdirSync(join(q.dir, 'pki/node-1.crt'), { recursive: true });
    writeFileSync(join(q.dir, 'pki/node-1.key'), 'x');
    refused(await hardway(q, 'certs'), `${join(q.dir, 'pki/node-1.crt')} is a directory, not a file`);
  });

  it('pki/machines, or a machine\'s directory in it, is a file', async () => {
    const p = makeProject({ machines: EXAMPLE_MACHINES, cluster: EC });
    mkdirSync(join(p.dir, 'pki'), { mode: 0o700 });
    writeFileSync(join(p.dir, 'pki/machines'), '');
    refused(await hardway(p, 'certs'), `${join(p.dir, 'pki/machines')} is a file, not a directory`);
    const q = makeProject({ machines: EXAMPLE_MACHINES, cluster: EC });
    mkdirSync(join(q.dir, 'pki/machines'), { recursive: true, mode: 0o700 });
    writeFileSync(join(q.dir, 'pki/machines/node-0'), '');
    refused(await hardway(q, 'certs'), `${join(q.dir, 'pki/machines/node-0')} is a file, not a directory`);
  });

  it('any other file-system error about a path becomes one line naming it (the CLI\'s last resort)', () => {
    const e = Object.assign(new Error("EISDIR: illegal operation on a directory, read"), { code: 'EISDIR', path: '/p/x.yaml' });
    expect(formatError(pathError(e)!)).toBe('error: /p/x.yaml: a directory where a file belongs\n  hint: fix or move away what is at that path, then run hardway again');
    expect(pathError(new Error('something else'))).toBeUndefined();
  });
});
