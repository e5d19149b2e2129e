// `hardway certs --renew-ca etcd-ca`: the etcd CA rotated in the cluster CA's three stages (start,
// switch, finish) on a project of three control planes, each stage checked with the openssl CLI:
// fresh, rerun after a run killed inside a stage, interrupted between stages (the next run does the
// next stage), converged (certs reissues nothing), and the cluster CA never touched.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pemBlocks } from '../../src/certs/pem.ts';
import { rotationStage } from '../../src/certs/ca-rotation.ts';
import { certifiedProject, hardway, renewCaStage, named, opensslVerifies, snapshot } from './certs.helpers.ts';

const HA = [
  '10.240.0.10 server-0.kubernetes.local server-0',
  '10.240.0.11 server-1.kubernetes.local server-1',
  '10.240.0.12 server-2.kubernetes.local server-2',
  '10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24',
  '',
].join('\n');
const SERVERS = ['server-0', 'server-1', 'server-2'];
/** Every certificate the etcd CA signs on this project. */
const ETCD_LEAVES = [...SERVERS.map((s) => `${s}/etcd-server`), 'etcd-client'].sort();

const haProject = () => certifiedProject({ machines: HA, kubeconfigs: true });

const stage = (p: { dir: string; machines: string }, behind: string[] = []) => renewCaStage(p, behind, false, 'etcd-ca');

const read = (p: { dir: string }, f: string) => readFileSync(join(p.dir, f), 'utf8');
const at = (p: { dir: string }, f: string) => join(p.dir, f);
const changed = (a: ReturnType<typeof snapshot>, b: ReturnType<typeof snapshot>) =>
  [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((f) => a[f]?.sha !== b[f]?.sha).sort();
/** True when every etcd leaf verifies against `caFile` with openssl. */
const etcdLeavesVerify = (p: { dir: string }, caFile: string) =>
  ['pki/etcd-client.crt', ...SERVERS.map((s) => `pki/machines/${s}/etcd-server.crt`)].every((c) => opensslVerifies(at(p, caFile), at(p, c)));

describe('hardway certs --renew-ca etcd-ca', () => {
  it('start, switch, finish on three control planes: both etcd CAs trusted, then the new one signs, then the old one leaves; the cluster CA untouched', async () => {
    const p = await haProject();
    const oldCa = read(p, 'pki/etcd-ca.crt');
    const clusterCa = read(p, 'pki/ca.crt');
    const s0 = snapshot(p.dir);

    const start = await stage(p, ['server-1 (distribute would make 2 change(s))']);
    expect(start.code, start.stderr).toBe(0);
    expect(start.stdout).toContain('etcd CA rotation 1/3 (start)');
    expect(start.stdout).toContain('then hardway certs --renew-ca etcd-ca --yes again');
    const s1 = snapshot(p.dir);
    expect(changed(s0, s1)).toEqual(['etcd-ca-next.crt', 'etcd-ca-next.key', 'etcd-ca.crt']);
    expect(s1['etcd-ca-next.key']!.mode).toBe('600');
    expect(pemBlocks(read(p, 'pki/etcd-ca.crt'))).toEqual([oldCa, read(p, 'pki/etcd-ca-next.crt')]);
    // The bundle still verifies every member's certificate (signed by the old CA), as etcd will read it.
    expect(etcdLeavesVerify(p, 'pki/etcd-ca.crt')).toBe(true);
    expect(rotationStage(p.dir, 'etcd-ca')).toBe('switch');
    expect(rotationStage(p.dir)).toBe('start');
    expect((await hardway(p, 'certs', 'check')).code).toBe(0);

    // switch: refused while a machine is behind; then every etcd leaf is reissued by the new CA.
    const refused = await stage(p, ['server-2 (distribute would make 2 change(s))']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('server-2 (distribute would make 2 change(s)); they may still trust only the old CA');
    expect(snapshot(p.dir)).toEqual(s1);
    const newCa = read(p, 'pki/etcd-ca-next.crt');
    const sw = await stage(p);
    expect(sw.code, sw.stderr).toBe(0);
    expect(sw.stdout).toContain('etcd CA rotation 2/3 (switch)');
    expect(named(sw, 'reissued').sort()).toEqual(ETCD_LEAVES);
    expect(pemBlocks(read(p, 'pki/etcd-ca.crt'))).toEqual([newCa, oldCa]);
    expect(read(p, 'pki/etcd-ca-previous.crt')).toBe(oldCa);
    expect(existsSync(at(p, 'pki/etcd-ca-next.key'))).toBe(false);
    writeFileSync(at(p, 'new-only.crt'), newCa);
    writeFileSync(at(p, 'old-only.crt'), oldCa);
    expect(etcdLeavesVerify(p, 'new-only.crt')).toBe(true);
    expect(etcdLeavesVerify(p, 'old-only.crt')).toBe(false);
    // A member still on the old certificate is trusted by the bundle the others now hold.
    const s2 = snapshot(p.dir);
    expect(changed(s1, s2).filter((f) => !f.startsWith('etcd') && !f.endsWith('etcd-server.crt') && !f.endsWith('etcd-server.key'))).toEqual([]);
    expect(read(p, 'pki/ca.crt')).toBe(clusterCa);
    expect((await hardway(p, 'certs', 'check')).code).toBe(0);

    const finish = await stage(p);
    expect(finish.code, finish.stderr).toBe(0);
    expect(finish.stdout).toContain('etcd CA rotation 3/3 (finish)');
    expect(read(p, 'pki/etcd-ca.crt')).toBe(newCa);
    expect(etcdLeavesVerify(p, 'pki/etcd-ca.crt')).toBe(true);
    expect(read(p, 'pki/etcd-ca-previous.crt')).toBe(oldCa);
    expect(read(p, 'pki/ca.crt')).toBe(clusterCa);

    // Converged: certs reissues nothing and names no file of the rotation as unused.
    const check = await hardway(p, 'certs', 'check');
    expect(check.code, check.stdout).toBe(0);
    const rerun = await hardway(p, 'certs');
    expect(named(rerun, 'reissued')).toEqual([]);
    expect(rerun.stdout).not.toContain('unused');
    // Another rotation would overwrite the CA this one retired: refused until it is moved away.
    const again = await stage(p);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('pki/etcd-ca-previous.crt or pki/etcd-ca-previous.key exists');
    expect(again.stderr).toContain('hardway certs --renew-ca etcd-ca --yes again');
  });

  it('a run killed inside a stage is completed by the next, with the same new CA; stopping between stages leaves the next stage to do', async () => {
    const p = await haProject();
    const oldCa = read(p, 'pki/etcd-ca.crt');
    expect((await stage(p)).code).toBe(0);
    const nextCa = read(p, 'pki/etcd-ca-next.crt');
    // Killed after the new CA was written but before the bundle: the rerun keeps that CA.
    writeFileSync(at(p, 'pki/etcd-ca.crt'), oldCa);
    expect(rotationStage(p.dir, 'etcd-ca')).toBe('start');
    expect((await stage(p)).code).toBe(0);
    expect(pemBlocks(read(p, 'pki/etcd-ca.crt'))).toEqual([oldCa, nextCa]);

    // Killed inside the switch, after the key and bundle but before ca-next.* went: the rerun finishes it.
    expect((await stage(p)).code).toBe(0);
    const afterSwitch = snapshot(p.dir);
    writeFileSync(at(p, 'pki/etcd-ca-next.crt'), nextCa);
    writeFileSync(at(p, 'pki/etcd-ca-next.key'), read(p, 'pki/etcd-ca.key'), { mode: 0o600 });
    expect(rotationStage(p.dir, 'etcd-ca')).toBe('switch');
    const resumed = await stage(p);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(named(resumed, 'reissued')).toEqual([]);
    expect(snapshot(p.dir)).toEqual(afterSwitch);
    expect(rotationStage(p.dir, 'etcd-ca')).toBe('finish');

    // Killed after the switch wrote the new key and bundle, before the leaves were reissued: certs
    // (or the finish's own refusal) catches the leaves still signed by the old CA.
    rmSync(at(p, 'pki/machines/server-1/etcd-server.crt'));
    const blocked = await stage(p);
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toContain('the old CA cannot leave pki/etcd-ca.crt yet: server-1/etcd-server');
    expect((await hardway(p, 'certs')).code).toBe(0);
    expect((await stage(p)).code).toBe(0);
    expect(pemBlocks(read(p, 'pki/etcd-ca.crt'))).toEqual([nextCa]);
  });

  it('--dry-run names the stage; without --yes it is refused; an unknown CA name is a usage error with a suggestion', async () => {
    const p = await haProject();
    const before = snapshot(p.dir);
    const dry = await hardway(p, 'certs', '--renew-ca', 'etcd-ca', '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^would start a rotation of the etcd CA \(stage 1\/3\): a new CA joins pki\/etcd-ca\.crt beside the old one, which still signs; nothing was changed\n$/);
    const refused = await hardway(p, 'certs', '--renew-ca', 'etcd-ca');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('"hardway certs --renew-ca etcd-ca" would start a rotation of the etcd CA');
    const typo = await hardway(p, 'certs', '--renew-ca', 'etcd-cq', '--yes');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('--renew-ca: "etcd-cq" is not a CA; did you mean "etcd-ca"?');
    expect(snapshot(p.dir)).toEqual(before);
  });
});
