// `hardway certs --renew-ca`: the cluster CA rotated in stages (start, switch, finish), each
// checked with the openssl CLI; switch and finish refused while a machine is behind pki/ (unless
// --force); never the CA by --renew; a rotation never overwrites the CA an earlier one retired.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pemBlocks } from '../../src/certs/pem.ts';
import { rotationStage } from '../../src/certs/ca-rotation.ts';
import { certifiedProject, hardway, renewCaStage, named, opensslVerifies, snapshot } from './certs.helpers.ts';

const freshProject = () => certifiedProject({ kubeconfigs: true });

const stage = (p: { dir: string; machines: string }, behind: string[], force = false) => renewCaStage(p, behind, force);

const read = (p: { dir: string }, f: string) => readFileSync(join(p.dir, f), 'utf8');
const changed = (a: ReturnType<typeof snapshot>, b: ReturnType<typeof snapshot>) =>
  [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((f) => a[f]?.sha !== b[f]?.sha).sort();
/** The CA data a kubeconfig embeds. */
const embeddedCa = (p: { dir: string }, f: string) => Buffer.from(/certificate-authority-data: (\S+)/.exec(read(p, f))![1]!, 'base64').toString('utf8');

describe('hardway certs --renew-ca', () => {
  it('start, switch, finish: both CAs trusted, then the new one signs, then the old one leaves; each stage checked with openssl', async () => {
    const p = await freshProject();
    const oldCa = read(p, 'pki/ca.crt');
    const s0 = snapshot(p.dir);

    // start: a new CA joins the bundle; nothing is reissued.
    const start = await stage(p, ['node-0 (distribute would make 3 change(s))']);
    expect(start.code).toBe(0);
    expect(start.stdout).toContain('CA rotation 1/3 (start)');
    const s1 = snapshot(p.dir);
    expect(changed(s0, s1).filter((f) => !f.endsWith('.kubeconfig'))).toEqual(['ca-next.crt', 'ca-next.key', 'ca.crt']);
    expect(s1['ca-next.key']!.mode).toBe('600');
    const bundle = pemBlocks(read(p, 'pki/ca.crt'));
    expect(bundle).toEqual([oldCa, read(p, 'pki/ca-next.crt')]);
    expect(embeddedCa(p, 'pki/jumpbox.kubeconfig')).toBe(read(p, 'pki/ca.crt'));
    expect(opensslVerifies(join(p.dir, 'pki/ca.crt'), join(p.dir, 'pki/kube-api-server.crt'))).toBe(true);
    expect((await hardway(p, 'certs', 'check')).code).toBe(0);
    expect(rotationStage(p.dir)).toBe('switch');

    // switch: refused while a machine is behind pki/ (nothing changes), unless --force.
    const refused = await stage(p, ['node-0 (distribute would make 3 change(s))']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("--renew-ca refused: 1 machine(s) do not hold pki/'s current CA files yet: node-0 (distribute would make 3 change(s)); they may still trust only the old CA");
    expect(refused.stderr).toContain('hint: run hardway distribute first');
    expect(snapshot(p.dir)).toEqual(s1);
    const newCa = read(p, 'pki/ca-next.crt');
    const sw = await stage(p, []);
    expect(sw.code).toBe(0);
    expect(sw.stdout).toContain('CA rotation 2/3 (switch)');
    expect(named(sw, 'reissued').sort()).toEqual(['admin', 'kube-api-server', 'kube-controller-manager', 'kube-proxy', 'kube-scheduler', 'node-0/kubelet', 'node-1/kubelet', 'service-accounts']);
    expect(pemBlocks(read(p, 'pki/ca.crt'))).toEqual([newCa, oldCa]);
    expect(read(p, 'pki/ca-previous.crt')).toBe(oldCa);
    expect(existsSync(join(p.dir, 'pki/ca-next.key'))).toBe(false);
    // The leaves verify against the new CA alone; etcd's CA and certificates are untouched.
    writeFileSync(join(p.dir, 'new-ca-only.crt'), newCa);
    expect(opensslVerifies(join(p.dir, 'new-ca-only.crt'), join(p.dir, 'pki/kube-api-server.crt'))).toBe(true);
    expect(opensslVerifies(join(p.dir, 'new-ca-only.crt'), join(p.dir, 'pki/machines/node-0/kubelet.crt'))).toBe(true);
    const s2 = snapshot(p.dir);
    expect(changed(s1, s2).filter((f) => f.startsWith('etcd') || f.includes('etcd-server') || f === 'service-accounts.key')).toEqual([]);
    expect((await hardway(p, 'certs', 'check')).code).toBe(0);

    // finish: refused while behind, then the old CA leaves the bundle and is kept aside.
    expect((await stage(p, ['server (not checked: connect ECONNREFUSED)'])).stderr).toContain('they may still hold certificates of the old CA');
    const finish = await stage(p, []);
    expect(finish.code).toBe(0);
    expect(finish.stdout).toContain('CA rotation 3/3 (finish)');
    expect(read(p, 'pki/ca.crt')).toBe(newCa);
    expect(embeddedCa(p, 'pki/machines/node-1/kubelet.kubeconfig')).toBe(newCa);
    expect(read(p, 'pki/ca-previous.crt')).toBe(oldCa);
    expect((await hardway(p, 'certs', 'check')).code).toBe(0);
    const rerun = await hardway(p, 'certs');
    expect(named(rerun, 'reissued')).toEqual([]);
    expect(rerun.stdout).not.toContain('unused');

    // Another rotation would overwrite the CA this one retired: refused until it is moved away.
    const again = await stage(p, []);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('pki/ca-previous.crt or pki/ca-previous.key exists: the CA an earlier rotation retired; nothing was changed');
  });

  it('--force goes ahead with a warning naming the machines', async () => {
    const p = await freshProject();
    expect((await stage(p, [])).code).toBe(0);
    const forced = await stage(p, ['node-1 (distribute would make 2 change(s))'], true);
    expect(forced.code).toBe(0);
    expect(forced.stderr).toContain('warning: --force: going ahead although node-1 (distribute would make 2 change(s))');
    expect(rotationStage(p.dir)).toBe('finish');
  });

  it('without --yes: refused (exit 2) naming the stage it would do and the line to run with --yes; --dry-run says the stage; nothing changes', async () => {
    const p = await freshProject();
    const before = snapshot(p.dir);
    const refused = await hardway(p, 'certs', '--renew-ca');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^error: "hardway certs --renew-ca" would start a rotation of the cluster CA \(stage 1\/3\): .*; it runs only with --yes\n/);
    expect(refused.stderr).toContain(`hint: run it again with --yes to do it: hardway certs --renew-ca --machines ${p.machines} --yes\n`);
    const dry = await hardway(p, 'certs', '--renew-ca', '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^would start a rotation of the cluster CA \(stage 1\/3\): .*; nothing was changed\n$/);
    expect(snapshot(p.dir)).toEqual(before);
  });

  it('--renew never touches a CA; --renew-ca and --force are usage errors in the wrong company', async () => {
    const p = await freshProject();
    const before = snapshot(p.dir);
    await hardway(p, 'certs', '--renew', '--yes');
    const after = snapshot(p.dir);
    expect([after['ca.crt'], after['ca.key'], after['etcd-ca.crt'], after['etcd-ca.key']]).toEqual([before['ca.crt'], before['ca.key'], before['etcd-ca.crt'], before['etcd-ca.key']]);
    const both = await hardway(p, 'certs', '--renew-ca', '--renew');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--renew-ca goes alone');
    const force = await hardway(p, 'certs', '--force');
    expect(force.code).toBe(2);
    expect(force.stderr).toContain('--force goes with --renew-ca only');
    expect(snapshot(p.dir)).toEqual(after);
  });
});
