// `up --dry-run` says what it would do in pki/ before any machine: each certificate it would issue
// or reissue and why (judged as `hardway certs` judges), each kubeconfig it would write, the
// encryption config; and writes nothing.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { previewPki } from '../../src/certs/pki-preview.ts';
import { loadInventory } from '../../src/inventory.ts';
import { certifiedProject, hardway, makeProject, snapshot } from './certs.helpers.ts';
import { loopbackProject } from './safety.helpers.ts';

const would = (dir: string) => previewPki(loadInventory(join(dir, 'machines.txt')), new Date()).lines.filter((l) => !l.kept).map((l) => l.text);

describe('previewPki', () => {
  it('a fresh project: both CAs, every certificate, kubeconfig and the encryption config would be made; pki/ is not even created', () => {
    const p = makeProject({ cluster: 'keyAlgorithm: ecdsa-p256\n' });
    const lines = would(p.dir);
    expect(lines).toContain('would issue ca (new): every certificate it signs is issued with it');
    expect(lines).toContain('would issue etcd-ca (new): every certificate it signs is issued with it');
    expect(lines).toContain('would issue kube-api-server (new)');
    expect(lines).toContain('would write pki/admin.kubeconfig (missing)');
    expect(lines).toContain('would write pki/encryption-config.yaml (new 32-byte key)');
    expect(existsSync(join(p.dir, 'pki'))).toBe(false);
  });

  it('a converged pki/: nothing would change', async () => {
    const p = await certifiedProject({ kubeconfigs: true });
    expect((await hardway(p, 'encryption-config')).code).toBe(0);
    expect(would(p.dir)).toEqual([]);
  });

  it("a pki/ made for other addresses (another cluster's): each certificate that would be reissued with a new key, and why; nothing written", async () => {
    const p = await certifiedProject({ kubeconfigs: true });
    expect((await hardway(p, 'encryption-config')).code).toBe(0);
    writeFileSync(p.machines, [
      '10.240.9.10 server.kubernetes.local server',
      '10.240.9.20 node-0.kubernetes.local node-0 10.200.0.0/24',
      '10.240.9.21 node-1.kubernetes.local node-1 10.200.1.0/24', '',
    ].join('\n'));
    const before = snapshot(p.dir);
    const lines = would(p.dir);
    expect(lines).toContain('would reissue kube-api-server with a new key: SANs changed: +IP:10.240.9.10 -IP:10.240.0.10');
    expect(lines).toContain('would reissue node-0/kubelet with a new key: SANs changed: +IP:10.240.9.20 -IP:10.240.0.20');
    expect(lines).toContain('would write pki/machines/node-0/kubelet.kubeconfig (node-0/kubelet is reissued)');
    expect(lines.filter((l) => l.startsWith('would reissue'))).toHaveLength(4);
    expect(snapshot(p.dir)).toEqual(before);
    // And the real run does exactly that.
    const real = await hardway(p, 'certs');
    expect(real.stdout.split('\n').filter((l) => l.startsWith('reissued')).map((l) => l.split(' ')[1])).toEqual(
      lines.filter((l) => l.startsWith('would reissue')).map((l) => l.split(' ')[2]));
  });
});

describe('hardway up --dry-run', () => {
  it('prints what it would do in pki/ before the first step, and changes nothing', async () => {
    const p = loopbackProject();
    const r = await hardway(p, 'up', '--dry-run', '--only', 'pin-hosts');
    expect(r.code).toBe(1); // the machines are on a loopback port where nothing listens
    const lines = r.stdout.split('\n');
    const first = lines.findIndex((l) => l.startsWith('==> pin-hosts'));
    expect(lines.slice(0, first)).toEqual(expect.arrayContaining([
      'pki: would issue ca (new): every certificate it signs is issued with it',
      'pki: would write pki/encryption-config.yaml (new 32-byte key)',
      expect.stringMatching(/^pki: 0 file\(s\) already up to date; the steps below compare the machines with pki\/ as it is now$/),
      'pki: there is no CA yet, so distribute cannot plan: "hardway certs && hardway kubeconfigs && hardway encryption-config" makes pki/ (or run up without --dry-run)',
    ]));
    expect(first).toBeGreaterThan(0);
    expect(existsSync(join(p.dir, 'pki'))).toBe(false);
  });
});
