// `hardway certs --renew [IDENTITY ...]`: which leaves are reissued (all, named, a machine's own),
// that a CA never is, that an unknown name is a usage error changing nothing, and that the
// kubeconfigs embedding a renewed certificate are rewritten.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { identitiesFor } from '../../src/certs/identities.ts';
import { renewSelection } from '../../src/certs/renew.ts';
import { InputError } from '../../src/errors.ts';
import { loadInventory } from '../../src/inventory.ts';
import { certifiedProject, hardway, makeProject, named, opensslKeyMatches, opensslVerifies, snapshot } from './certs.helpers.ts';

const EC = 'keyAlgorithm: ecdsa-p256\n';

const freshProject = () => certifiedProject({ cluster: EC, kubeconfigs: true });

/** The files of pki/ whose bytes differ between two snapshots. */
function changedFiles(before: ReturnType<typeof snapshot>, after: ReturnType<typeof snapshot>): string[] {
  return Object.keys(after).filter((f) => after[f]!.sha !== before[f]?.sha).sort();
}

const serial = (dir: string, file: string) => new X509Certificate(readFileSync(join(dir, file))).serialNumber;

describe('renewSelection', () => {
  const ids = identitiesFor(loadInventory(makeProject().machines));

  it('no names: every leaf, never a CA', () => {
    expect([...renewSelection(ids, [])]).toEqual(ids.map((i) => i.name));
    expect(renewSelection(ids, []).has('ca')).toBe(false);
  });

  it('named leaves, and a machine name for that machine\'s own certificates', () => {
    expect([...renewSelection(ids, ['kube-api-server', 'node-0/kubelet'])]).toEqual(['kube-api-server', 'node-0/kubelet']);
    expect([...renewSelection(ids, ['server'])]).toEqual(['server/etcd-server']);
  });

  it('an unknown name is a usage error (exit 2) listing the known ones', () => {
    const e = (() => {
      try {
        renewSelection(ids, ['kube-apiserver']);
      } catch (err) {
        return err;
      }
    })() as InputError;
    expect(e).toBeInstanceOf(InputError);
    expect(e.exitCode).toBe(2);
    expect(e.message).toBe('unknown certificate "kube-apiserver" for --renew');
    expect(e.hint).toMatch(/^did you mean "kube-api-server"\? the certificates are: /);
    expect(e.hint).toContain('admin, node-0/kubelet, node-1/kubelet, kube-proxy, kube-controller-manager, kube-scheduler, kube-api-server');
  });

  it('a CA named is refused with the way to rotate it', () => {
    expect(() => renewSelection(ids, ['ca'])).toThrow(/--renew reissues leaf certificates only, not the CA \(ca\)/);
  });
});

describe('hardway certs --renew', () => {
  it('renews only kube-api-server: new key, new serial, same CA; nothing else changes', async () => {
    const p = await freshProject();
    const before = snapshot(p.dir);
    const old = serial(p.dir, 'pki/kube-api-server.crt');
    const run = await hardway(p, 'certs', '--renew', 'kube-api-server');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('reissued kube-api-server (renewal asked for (--renew))\n');
    expect(named(run, 'reissued')).toEqual(['kube-api-server']);
    expect(run.stdout).toContain('next: hardway distribute');
    expect(changedFiles(before, snapshot(p.dir))).toEqual(['kube-api-server.crt', 'kube-api-server.key']);
    expect(serial(p.dir, 'pki/kube-api-server.crt')).not.toBe(old);
    expect(opensslVerifies(join(p.dir, 'pki/ca.crt'), join(p.dir, 'pki/kube-api-server.crt'))).toBe(true);
    // A plain rerun keeps the renewed one.
    const again = await hardway(p, 'certs');
    expect(named(again, 'reissued')).toEqual([]);
  });

  it("renews a node's kubelet certificate and rewrites the kubeconfig that embeds it", async () => {
    const p = await freshProject();
    const before = snapshot(p.dir);
    const run = await hardway(p, 'certs', '--renew', 'node-0/kubelet');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('written pki/machines/node-0/kubelet.kubeconfig\n');
    expect(changedFiles(before, snapshot(p.dir))).toEqual(['machines/node-0/kubelet.crt', 'machines/node-0/kubelet.key', 'machines/node-0/kubelet.kubeconfig']);
    const kubeconfig = readFileSync(join(p.dir, 'pki/machines/node-0/kubelet.kubeconfig'), 'utf8');
    const embedded = Buffer.from(/client-certificate-data: (\S+)/.exec(kubeconfig)![1]!, 'base64').toString('utf8');
    expect(embedded).toBe(readFileSync(join(p.dir, 'pki/machines/node-0/kubelet.crt'), 'utf8'));
  });

  it('no names (every leaf) without --yes: refused (exit 2) saying what it would reissue and the line to run with --yes; --dry-run writes nothing', async () => {
    const p = await freshProject();
    const before = snapshot(p.dir);
    const refused = await hardway(p, 'certs', '--renew');
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^error: "hardway certs --renew" would reissue \d+ certificate\(s\) with new keys although they are still right: admin, .*kube-api-server.*; it runs only with --yes\n/);
    expect(refused.stderr).toContain(`hint: run it again with --yes to do it: hardway certs --renew --machines ${p.machines} --yes\n`);
    expect(refused.stderr).toContain(`or with --dry-run to see what it would do: hardway certs --renew --machines ${p.machines} --dry-run\n`);
    const dry = await hardway(p, 'certs', '--renew', '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    // One line per certificate (the service-accounts key kept), then the kubeconfigs that embed them, as the run does.
    expect(dry.stdout).toMatch(/^would reissue admin with a new key: renewal asked for \(--renew\)\n/);
    expect(dry.stdout).toContain('would reissue service-accounts keeping its key (it signs every service-account token): renewal asked for (--renew)\n');
    expect(dry.stdout).toMatch(/\nnothing was changed \(--dry-run\)\n$/);
    expect(snapshot(p.dir)).toEqual(before);
    // A name says what it renews: no --yes needed.
    expect((await hardway(p, 'certs', '--renew', 'admin')).code).toBe(0);
  });

  it('no names: every leaf renewed, both CAs kept byte for byte', async () => {
    const p = await freshProject();
    const before = snapshot(p.dir);
    const run = await hardway(p, 'certs', '--renew', '--yes');
    expect(run.code).toBe(0);
    expect(named(run, 'kept')).toEqual(['ca', 'etcd-ca']);
    const changed = changedFiles(before, snapshot(p.dir));
    expect(changed.filter((f) => f.startsWith('ca.') || f.startsWith('etcd-ca.'))).toEqual([]);
    expect(changed).toContain('kube-api-server.key');
    expect(changed).toContain('jumpbox.kubeconfig');
    // The service-accounts key signs every service-account token: its certificate is new, the key kept.
    expect(changed).toContain('service-accounts.crt');
    expect(changed).not.toContain('service-accounts.key');
    expect(run.stdout).toContain('reissued service-accounts (renewal asked for (--renew)), same key (it signs every service-account token)\n');
    expect(opensslKeyMatches(join(p.dir, 'pki/service-accounts.crt'), join(p.dir, 'pki/service-accounts.key'))).toBe(true);
  });

  it('an unknown name exits 2 and changes nothing; a name without --renew is a usage error', async () => {
    const p = await freshProject();
    const before = snapshot(p.dir);
    const run = await hardway(p, 'certs', '--renew', 'node-9');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/unknown certificate "node-9" for --renew\n\s+hint: did you mean "node-0" or "node-1"\? the certificates are: admin, /);
    const bare = await hardway(p, 'certs', 'kube-api-server');
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('certificate names go with --renew');
    expect(snapshot(p.dir)).toEqual(before);
  });
});
