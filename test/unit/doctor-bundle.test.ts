// doctor --bundle: the archive a person attaches to a bug report. From fake machines that even
// print pki/'s secrets (a journal line with a private key, a config with the encryption key), the
// bundle is unpacked with tar and searched for every secret of pki/: none may be in it.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { doctorCommand } from '../../src/commands/doctor.ts';
import { BUNDLE_ROOT, writeBundle } from '../../src/doctor/bundle.ts';
import { InputError } from '../../src/errors.ts';
import { loadInventory } from '../../src/inventory.ts';
import { WORKER } from '../../src/layout.ts';
import { FakeTransport } from '../fixtures/fake-transport.ts';
import { routes } from '../../src/probes/network.ts';
import { journalTails, serviceStates } from '../../src/probes/systemd.ts';
import { unpackBundle } from '../helpers/unpack-bundle.ts';
import { capture, MACHINES } from './engine.helpers.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const keyPem = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

/** A project whose pki/ holds keys, a kubeconfig with embedded key, certificate and token, and an encryption key. */
function project() {
  const dir = mkdtempSync(join(tmpdir(), 'hw-bundle-'));
  writeFileSync(join(dir, 'machines.txt'), MACHINES);
  mkdirSync(join(dir, 'pki/machines/node-0'), { recursive: true });
  const caKey = keyPem();
  const kubeletKey = keyPem();
  const token = randomBytes(24).toString('hex');
  const encryption = randomBytes(32).toString('base64');
  const clientCert = b64(`-----BEGIN CERTIFICATE-----\n${randomBytes(60).toString('base64')}\n-----END CERTIFICATE-----\n`);
  const kubeconfig = `apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: ${b64('ca')}\n    server: https://server.kubernetes.local:6443\n  name: kubernetes-the-hard-way\nusers:\n- name: system:node:node-0\n  user:\n    client-certificate-data: ${clientCert}\n    client-key-data: ${b64(kubeletKey)}\n    token: ${token}\n`;
  writeFileSync(join(dir, 'pki/ca.key'), caKey);
  writeFileSync(join(dir, 'pki/ca.crt'), '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n');
  writeFileSync(join(dir, 'pki/machines/node-0/kubelet.key'), kubeletKey);
  writeFileSync(join(dir, 'pki/machines/node-0/kubelet.kubeconfig'), kubeconfig);
  writeFileSync(join(dir, 'pki/encryption-config.yaml'), `kind: EncryptionConfiguration\napiVersion: v1\nresources:\n  - resources: [secrets]\n    providers:\n      - aescbc:\n          keys:\n            - name: key1\n              secret: ${encryption}\n      - identity: {}\n`);
  // Every secret as the test itself finds them: whole key files and their lines, the kubeconfig's values, the encryption key.
  const secrets = [caKey, kubeletKey, ...[caKey, kubeletKey].flatMap((k) => k.split('\n').filter((l) => l.length >= 16 && !l.startsWith('-----'))),
    clientCert, b64(kubeletKey), token, encryption];
  return { dir, caKey, kubeletKey, token, encryption, kubeconfig, secrets };
}


describe('doctor --bundle', () => {
  it('holds the report, each machine\'s services, journal, checksums, routes and configs, and no secret of pki/', async () => {
    const p = project();
    const inv = loadInventory(join(p.dir, 'machines.txt'));
    const worker = new FakeTransport('node-0', { files: {
      '/etc/hosts': '127.0.0.1 localhost\n10.240.0.20 node-0.kubernetes.local node-0\n',
      [WORKER.cniBridgeConf]: '{"type": "bridge"}\n',
      // A config that should never hold one, holding the encryption key: the bundle must still not.
      [WORKER.kubeletConfig]: `kind: KubeletConfiguration\n# leaked ${p.encryption}\n`,
      [WORKER.kubeletKey]: { content: p.kubeletKey, mode: 0o600 },
      [WORKER.kubeletKubeconfig]: { content: p.kubeconfig.replace('token', 'tokens'), mode: 0o600 },
    } });
    worker.answer(serviceStates, () => ({ code: 0, stdout: 'Id=containerd.service\nUnitFileState=enabled\nActiveState=active\nLoadState=loaded\n\nId=kubelet.service\nUnitFileState=enabled\nActiveState=failed\nLoadState=loaded\n\nId=kube-proxy.service\nUnitFileState=enabled\nActiveState=active\nLoadState=loaded\n' }))
      .answer(journalTails, (_services, lines) => {
        if (lines !== 60) throw new Error(`the bundle asked ${lines} journal lines`);
        return { code: 0, stdout: `== kubelet\nE1202 kubelet: bad key ${p.kubeletKey}\nE1202 token ${p.token} client-key-data ${b64(p.kubeletKey)}\n== kube-proxy\nI1202 started\n` };
      })
      .answer(routes, () => ({ code: 0, stdout: 'default via 10.240.0.1 dev eth0\n10.200.1.0/24 via 10.240.0.21 dev eth0\n' }));
    const server = new FakeTransport('server');
    server.execError = new Error('connect ECONNREFUSED 10.240.0.10:22');
    const fakes = new Map([['node-0', worker], ['server', server]]);
    const file = join(p.dir, 'bundle.tar.gz');
    const n = await writeBundle({
      file, inventory: inv, machines: inv.machines.filter((m) => m.hostname !== 'node-1'),
      doctorText: 'doctor: 1 problem\n', doctorJson: '{"ok":false,"findings":[]}\n',
      connect: async (host) => {
        const t = fakes.get(host.name)!;
        if (t.execError) throw t.execError;
        return t;
      },
      env: { PATH: '' },
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const files = unpackBundle(file);
    const at = (rel: string) => files.get(`${BUNDLE_ROOT}/${rel}`);
    expect(n).toBe(files.size);
    expect(at('doctor.txt')).toBe('doctor: 1 problem\n');
    expect(at('doctor.json')).toBe('{"ok":false,"findings":[]}\n');
    expect(at('cluster/error.txt')).toContain('kubectl is not on PATH');
    expect(at('machines/server/unreachable.txt')).toContain('ECONNREFUSED');
    expect(at('machines/node-0/services.txt')).toMatch(/^kubelet +enabled=enabled active=failed$/m);
    expect(at('machines/node-0/journal.txt')).toContain('== kubelet\nE1202 kubelet: bad key [REDACTED]');
    expect(at('machines/node-0/routes.txt')).toBe('default via 10.240.0.1 dev eth0\n10.200.1.0/24 via 10.240.0.21 dev eth0\n');
    expect(at('machines/node-0/etc-hosts')).toContain('10.240.0.20 node-0.kubernetes.local node-0');
    expect(at('machines/node-0/cni/10-bridge.conf')).toBe('{"type": "bridge"}\n');
    expect(at('machines/node-0/cni/99-loopback.conf')).toBe('(missing)\n');
    expect(at('machines/node-0/kubelet-config.yaml')).toBe('kind: KubeletConfiguration\n# leaked [REDACTED]\n');
    // Checksums of the installed copies against pki/: the key matches, the kubeconfig differs, the certificate is missing.
    const filesTxt = at('machines/node-0/files.txt')!;
    expect(filesTxt).toMatch(new RegExp(`^ok +${WORKER.kubeletKey}$`, 'm'));
    expect(filesTxt).toMatch(new RegExp(`^differs +${WORKER.kubeletKubeconfig}$`, 'm'));
    expect(filesTxt).toMatch(new RegExp(`^missing +${WORKER.kubeletCrt}$`, 'm'));
    expect(at('project/machines.txt')).toBe(MACHINES);
    expect(at('README.txt')).toContain('Left out: every file of pki/');
    for (const [path, text] of files) {
      for (const s of p.secrets) expect(text.includes(s), `${path} holds a secret of pki/ (${s.slice(0, 20)}...)`).toBe(false);
    }
  });

  it('--bundle takes a .tar.gz file name in a directory that exists, before any machine is asked', async () => {
    const run = (bundle: string) => doctorCommand.run({ values: { bundle }, positionals: [], stdout: capture().stream, stderr: capture().stream, cwd: tmpdir(), env: {} });
    await expect(run('bundle.zip')).rejects.toThrow(InputError);
    await expect(run('bundle.zip')).rejects.toThrow('--bundle "bundle.zip" is not a .tar.gz file name');
    await expect(run('no/such/dir/b.tar.gz')).rejects.toThrow(/directory ".*no\/such\/dir" does not exist/);
  });
});
