// A dry run lists exactly what the same command without --dry-run does (issue 36 point 1): for
// every command that has --dry-run and works on this machine (certs in its forms) the "would" lines
// are compared with the files the real run writes in pki/; for a command that works on the machines
// (pin-hosts, and up's steps on a fake cluster), the changes the dry run plans per step and machine
// with those the run applies; multipass down, the VMs it would delete and leave alone with those it
// does (a fake Multipass). etcd snapshot restore's dry run is checked in etcd-snapshot.test.ts;
// lab down and lab break need root and a lab, and are not compared here.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { caIdentities, identitiesFor } from '../../src/certs/identities.ts';
import { loadInventory } from '../../src/inventory.ts';
import { EXAMPLE_MACHINES, certifiedProject, hardway, makeProject, snapshot } from './certs.helpers.ts';
import { fakeCluster, inventoryOf, projectDir, runCommand } from './engine.helpers.ts';
import { DEBIAN_OS_RELEASE } from '../fixtures/fake-transport.ts';
import { describeDownPlan, multipassDown } from '../../src/multipass/down.ts';
import { multipassUp } from '../../src/multipass/up.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { FakeMultipass, fakeDeps } from './multipass.helpers.ts';

type Snapshot = ReturnType<typeof snapshot>;

/** The files of pki/ a run wrote: new ones and those whose bytes changed (directories aside). */
function written(before: Snapshot, after: Snapshot): string[] {
  return Object.keys(after).filter((f) => after[f]!.sha !== 'directory' && after[f]!.sha !== before[f]?.sha).sort();
}

/** The pki/ files a dry run's lines say would be written: a certificate's crt and key (the crt alone when its key is kept), a kubeconfig, the encryption config. */
function wouldWrite(dir: string, stdout: string): string[] {
  const inv = loadInventory(join(dir, 'machines.txt'));
  const files = new Map([...caIdentities(), ...identitiesFor(inv)].map((i) => [i.name, i.files] as const));
  const inPki = (p: string) => p.replace(/^pki\//, '');
  const out: string[] = [];
  for (const line of stdout.split('\n')) {
    const cert = /^would (?:re)?issue (\S+) (.*)$/.exec(line);
    const file = /^would write (\S+)/.exec(line);
    if (cert) {
      const f = files.get(cert[1]!)!;
      out.push(inPki(f.crt), ...(cert[2]!.startsWith('keeping its key') ? [] : [inPki(f.key)]));
    } else if (file) out.push(inPki(file[1]!));
  }
  return out.sort();
}

/** Runs `certs ARGS --dry-run`, then `certs ARGS`: what the first says it would write, what the second wrote. */
async function both(project: { dir: string; machines: string }, ...args: string[]): Promise<{ would: string[]; wrote: string[] }> {
  const before = existsSync(join(project.dir, 'pki')) ? snapshot(project.dir) : {};
  const dry = await hardway(project, 'certs', ...args, '--dry-run');
  expect(dry.code, dry.stderr).toBe(0);
  expect(existsSync(join(project.dir, 'pki')) ? snapshot(project.dir) : {}).toEqual(before);
  const real = await hardway(project, 'certs', ...args);
  expect(real.code, real.stderr).toBe(0);
  return { would: wouldWrite(project.dir, dry.stdout), wrote: written(before, snapshot(project.dir)) };
}

describe('certs --dry-run lists what certs writes', () => {
  it('a fresh project: both CAs and every certificate, no kubeconfig nor encryption config', async () => {
    const p = makeProject({ cluster: 'keyAlgorithm: ecdsa-p256\n' });
    const { would, wrote } = await both(p);
    expect(would).toEqual(wrote);
    expect(would).toContain('ca.key');
    expect(would.filter((f) => f.endsWith('.kubeconfig') || f.startsWith('encryption'))).toEqual([]);
  });

  it('a worker added: its own certificate (and what names it), nothing else', async () => {
    const p = await certifiedProject({ kubeconfigs: true });
    writeFileSync(p.machines, `${EXAMPLE_MACHINES}10.240.0.22 node-2.kubernetes.local node-2 10.200.2.0/24\n`);
    const { would, wrote } = await both(p);
    expect(would).toEqual(wrote);
    expect(would).toContain('machines/node-2/kubelet.crt');
  });

  it('--renew NAME: the certificate with a new key, and the kubeconfigs that embed it', async () => {
    const p = await certifiedProject({ kubeconfigs: true });
    const { would, wrote } = await both(p, '--renew', 'admin');
    expect(would).toEqual(wrote);
    expect(would).toEqual(['admin.crt', 'admin.key', 'admin.kubeconfig', 'jumpbox.kubeconfig']);
  });

  it('--renew of a machine: its certificates and its kubeconfig; the service-accounts key kept when it is renewed', async () => {
    const p = await certifiedProject({ kubeconfigs: true });
    const node = await both(p, '--renew', 'node-0');
    expect(node.would).toEqual(node.wrote);
    expect(node.would).toContain('machines/node-0/kubelet.kubeconfig');
    const sa = await both(p, '--renew', 'service-accounts');
    expect(sa.would).toEqual(sa.wrote);
  });
});

/** A run's --json results as `step machine changes` lines. */
const changes = (stdout: string) => (JSON.parse(stdout) as { results: Array<{ step: string; machine: string; changes: number }> }).results.map((r) => `${r.step} ${r.machine} ${r.changes}`);

describe('a remote command: the changes its dry run plans are those its run applies', () => {
  it('pin-hosts on fresh machines, then converged (both nothing)', async () => {
    const dir = projectDir();
    const fakes = fakeCluster(inventoryOf(), (h) => ({ hostname: h, tools: [], files: { '/etc/hosts': '127.0.0.1 localhost\n', '/etc/hostname': `${h}\n`, '/etc/os-release': DEBIAN_OS_RELEASE } }));
    const dry = await runCommand('pin-hosts', ['--dry-run', '--json'], dir, fakes);
    for (const f of fakes.values()) expect(f.uploads, 'a dry run uploads nothing').toEqual([]);
    const real = await runCommand('pin-hosts', ['--json'], dir, fakes);
    expect(real.code, real.stderr).toBe(0);
    expect(changes(dry.stdout)).toEqual(changes(real.stdout));
    expect(changes(real.stdout).some((c) => !c.endsWith(' 0'))).toBe(true);
    const again = await runCommand('pin-hosts', ['--dry-run', '--json'], dir, fakes);
    expect(changes(again.stdout).every((c) => c.endsWith(' 0'))).toBe(true);
  });

  it('up in a fresh project: the pki/ files its dry run lists are those it makes (certificates, kubeconfigs, encryption config), and the same changes', async () => {
    const dir = projectDir();
    writeFileSync(join(dir, 'cluster.yaml'), 'keyAlgorithm: ecdsa-p256\n');
    const fakes = fakeCluster(inventoryOf(), (h) => ({ hostname: h, tools: [], files: { '/etc/hosts': '127.0.0.1 localhost\n', '/etc/hostname': `${h}\n`, '/etc/os-release': DEBIAN_OS_RELEASE } }));
    const pkiLines = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('pki: would ')).map((l) => l.slice('pki: '.length)).join('\n');
    const dry = await runCommand('up', ['--only', 'pin-hosts', '--dry-run', '--json'], dir, fakes);
    expect(dry.code, dry.stderr).toBe(0);
    expect(existsSync(join(dir, 'pki'))).toBe(false);
    // What it writes, as the README says: the run's log.
    expect(readdirSync(join(dir, 'logs')).filter((f) => f.endsWith('.log'))).toHaveLength(1);
    const real = await runCommand('up', ['--only', 'pin-hosts', '--json'], dir, fakes);
    expect(real.code, real.stderr).toBe(0);
    const would = wouldWrite(dir, pkiLines(dry.stderr));
    expect(would).toEqual(written({}, snapshot(dir)));
    expect(would).toEqual(expect.arrayContaining(['ca.key', 'jumpbox.kubeconfig', 'encryption-config.yaml']));
    expect(changes(dry.stdout)).toEqual(changes(real.stdout));
  });
});

describe('multipass down --dry-run names the VMs multipass down deletes, and those it leaves alone', () => {
  it('three VMs hardway launched and one it did not', async () => {
    const fake = new FakeMultipass();
    const deps = fakeDeps(fake);
    const dir = mkdtempSync(join(tmpdir(), 'hw-mp-dry-'));
    await multipassUp({ prefix: 'hw', servers: 1, workers: 2, image: '24.04', cpus: 2, memory: '2G', disk: '20G', dir, timeoutS: 60 }, deps);
    fake.addForeign('hw-scratch');
    const plan = await describeDownPlan('hw', deps);
    const listed = (line: string | undefined, lead: string) => line?.startsWith(lead) ? line.slice(lead.length).replace(/ \(.*$/, '').split(', ').sort() : [];
    const done = await multipassDown('hw', deps);
    expect(listed(plan[0], 'would delete and purge: ')).toEqual([...done.deleted].sort());
    expect(listed(plan[1], 'would leave alone: ')).toEqual(done.leftAlone.map((l) => l.vm).sort());
    expect(done.deleted).toHaveLength(3);
  });
});
