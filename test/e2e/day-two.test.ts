// Day two on the shared lab (test/e2e/helpers/shared-lab.ts: 1 server, workers node-0 and node-1,
// and node-2 booted but left out of machines.txt), with the real Kubernetes v1.20.2 binaries. It runs
// first on the shared lab, on machines hardway never touched (or reset ones): a worker line added is brought in by `up`
// with nothing else changed on the others than their hosts block and routes; `remove-node` takes it
// out again, once while its line is still in machines.txt and once after the line is gone (its
// address then from its certificate), each time leaving node-2 as it was before it ever joined and
// `up` with nothing to change; `reset --dry-run` changes nothing; `reset` leaves every machine's
// packages, /etc/hosts, cloud-init template, routes, unit files, iptables rules and mounts as they
// were before the first `up`, and a second reset changes nothing. `up` building the cluster again
// on the reset machines is cluster.test.ts's first up, the next suite on the shared lab.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lab } from './helpers/lab.ts';
import { machinesWithSpare, markFresh, sparedMachines, useSharedCluster } from './helpers/shared-lab.ts';
import { CLUSTER_SERVICES, failures, invocationIds, jumpboxKubectl, runPrefix, runJson } from './helpers/cluster.ts';

const lab = useSharedCluster({ fresh: true });
const UP = ['up', '--ready-timeout', '180'];
const OTHERS = ['server', 'node-0', 'node-1'];
const ALL = [...OTHERS, 'node-2'];
const TEMPLATE = '/etc/cloud/templates/hosts.debian.tmpl';
const ROUTES_UNIT = '/etc/systemd/system/hardway-pod-routes.service';

/** What "as before the first up" means: each command's output on the machine. */
const OS_STATE: Record<string, string> = {
  packages: "dpkg-query -W -f='${Package} ${Version} ${Status}\\n' | sort",
  hosts: 'cat /etc/hosts',
  template: `cat ${TEMPLATE}`,
  routes: 'ip -4 route show',
  unitFiles: 'systemctl list-unit-files --no-legend --no-pager | sort',
  fstab: 'cat /etc/fstab',
  // Rules and chains, not the built-in chains' counters (a table appears once something used it).
  iptables: "{ iptables-save; ip6tables-save; } | grep -E '^(-A|:)' | grep -vE '^:(INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) ' || true",
  links: 'ip -o link show | cut -d: -f2 | sort',
  mounts: "cut -d ' ' -f 2 /proc/self/mounts | sort",
  hardwayPaths: 'ls -d /usr/local/bin/* /var/lib/kubelet /var/lib/kubernetes /var/lib/etcd /etc/etcd /etc/cni /opt/cni /etc/containerd /var/lib/hardway /var/lib/cni 2>/dev/null || true',
};

async function osState(l: Lab, machine: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [k, cmd] of Object.entries(OS_STATE)) out[k] = await l.run(machine, cmd);
  return out;
}

/** SHA-256 of every file hardway installs or edits on a machine (the kubelet's run-time files left out). */
async function installedSums(l: Lab, machine: string): Promise<Map<string, string>> {
  const out = await l.run(machine, 'find /etc/systemd/system /usr/local/bin /var/lib/kubernetes /etc/etcd /etc/kubernetes /etc/containerd /etc/cni /opt/cni /var/lib/kube-proxy /etc/sysctl.d /etc/modules-load.d /etc/hosts /etc/cloud/templates -xdev -type f -exec sha256sum {} + 2>/dev/null; find /var/lib/kubelet -maxdepth 1 -type f -exec sha256sum {} + 2>/dev/null; :');
  return new Map(out.trim().split('\n').map((line) => {
    const [sum, path] = line.split(/\s+/) as [string, string];
    return [path, sum];
  }));
}

/** The paths whose checksum differs (or that appeared or went) between two sums. */
function changed(a: Map<string, string>, b: Map<string, string>): string[] {
  return [...new Set([...a.keys(), ...b.keys()])].filter((p) => a.get(p) !== b.get(p)).sort();
}

async function nodes(l: Lab): Promise<string[]> {
  const out = await jumpboxKubectl(l, ['get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}']);
  return out.trim().split('\n').filter(Boolean).sort();
}

/** Runs a hardway command with --json; expects exit 0 and no failure; returns the summary. */
async function ok(l: Lab, args: string[]) {
  const r = await runJson(l, args);
  expect(failures(r.json), `hardway ${args.join(' ')}:\n${r.stderr.slice(-4000)}`).toEqual({});
  expect(r.code, r.stderr.slice(-4000)).toBe(0);
  return r;
}

describe('day two on a 1-server 3-worker lab: add a worker, remove-node, reset', () => {
  let withNode2 = '';
  let withoutNode2 = '';
  const before = new Map<string, Record<string, string>>();
  const machinesFile = () => join(lab().dir, 'machines.txt');
  const ip = (host: string) => sparedMachines(lab()).find((m) => m.hostname === host)!.ip;

  beforeAll(async () => {
    const l = lab();
    withNode2 = machinesWithSpare(l);
    withoutNode2 = readFileSync(machinesFile(), 'utf8');
    for (const m of ALL) before.set(m, await osState(l, m));
  });
  // The shared lab's machines.txt as the next suite expects it, also when a test failed with node-2 in it.
  afterAll(() => {
    if (withoutNode2) writeFileSync(machinesFile(), withoutNode2);
  });

  /** node-2 after remove-node: as before it ever joined; the API and the other machines without it. */
  async function expectNode2Gone(l: Lab) {
    expect(await nodes(l)).toEqual(['node-0 True', 'node-1 True']);
    expect(await osState(l, 'node-2')).toEqual(before.get('node-2'));
    for (const m of OTHERS) {
      expect(await l.run(m, 'ip -4 route show'), m).not.toContain(`via ${ip('node-2')}`);
      expect(await l.run(m, `cat /etc/hosts ${TEMPLATE}`), m).not.toMatch(/node-2/);
    }
  }

  it('up builds the cluster of server, node-0 and node-1', async () => {
    const l = lab();
    await ok(l, UP);
    expect(await nodes(l)).toEqual(['node-0 True', 'node-1 True']);
  });

  it('a worker line added: up brings node-2 in, and changes nothing on the others but their hosts block and routes', async () => {
    const l = lab();
    const sums = new Map<string, Map<string, string>>();
    const ids = new Map<string, Record<string, string>>();
    for (const m of OTHERS) {
      sums.set(m, await installedSums(l, m));
      ids.set(m, await invocationIds(l, m, CLUSTER_SERVICES));
    }
    writeFileSync(machinesFile(), withNode2);
    await ok(l, UP);
    expect(await nodes(l)).toEqual(['node-0 True', 'node-1 True', 'node-2 True']);
    for (const m of OTHERS) {
      expect(await invocationIds(l, m, CLUSTER_SERVICES), `services restarted on ${m}`).toEqual(ids.get(m));
      const files = changed(sums.get(m)!, await installedSums(l, m));
      expect(files.filter((p) => ![`/etc/hosts`, TEMPLATE, ROUTES_UNIT].includes(p)), `files changed on ${m}`).toEqual([]);
      expect(files).toContain('/etc/hosts');
      expect(await l.run(m, 'getent hosts node-2')).toContain(ip('node-2'));
      expect(files).toContain(ROUTES_UNIT);
      expect(await l.run(m, 'ip -4 route show')).toContain(`via ${ip('node-2')}`);
    }
  });

  it('remove-node node-2 while its line is still in machines.txt; with the line gone, up has nothing to change', async () => {
    const l = lab();
    const refused = await l.hardway(['remove-node', 'node-2']);
    expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining('it runs only with --yes')]);
    await ok(l, ['remove-node', 'node-2', '--yes']);
    await expectNode2Gone(l);
    writeFileSync(machinesFile(), withoutNode2);
    expect((await ok(l, UP)).json.changed).toBe(0);
  });

  it('remove-node node-2 after its line left machines.txt: its address from its certificate; then up has nothing to change', async () => {
    const l = lab();
    writeFileSync(machinesFile(), withNode2);
    await ok(l, UP);
    expect(await nodes(l)).toEqual(['node-0 True', 'node-1 True', 'node-2 True']);
    writeFileSync(machinesFile(), withoutNode2);
    const r = await ok(l, ['remove-node', 'node-2', '--yes']);
    expect(r.stderr).toContain(`remove-node: node-2 (${ip('node-2')}, from pki/machines/node-2/kubelet.crt)`);
    await expectNode2Gone(l);
    expect((await ok(l, UP)).json.changed).toBe(0);
  });

  it('reset --dry-run lists what it would remove and changes nothing', async () => {
    const l = lab();
    const ids = await invocationIds(l, 'node-0', CLUSTER_SERVICES);
    const sums = await installedSums(l, 'node-0');
    const r = await l.hardway(['reset', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    // Each command as it would run: through the login user's sudo (`sudo -n sh -c '...'`) on the shared lab.
    const run = `node-0:   run: ${runPrefix(l)}`;
    expect(r.stdout).toContain(`${run}systemctl disable --now hardway-pod-routes hardway-pod-forwarding kube-proxy kubelet${l.loginUser ? "'" : ''} (`);
    // The last path stands before sudo's closing quote: read the line without it.
    const rm = r.stdout.split('\n').find((line) => line.startsWith(`${run}rm -f -- `))?.replace(/' \(/, ' (');
    for (const file of ['/usr/local/bin/kubelet', '/var/lib/kubelet/kubelet.key', '/etc/systemd/system/kubelet.service', '/etc/cni/net.d/10-bridge.conf']) expect(rm).toContain(` ${file} `);
    expect(r.stdout).toContain('kept /var/lib/etcd (etcd\'s data: the whole cluster state); "--delete-data etcd" removes it');
    expect(await invocationIds(l, 'node-0', CLUSTER_SERVICES)).toEqual(ids);
    expect(await installedSums(l, 'node-0')).toEqual(sums);
  });

  it('reset --delete-data etcd leaves every machine as before the first up; a second reset changes nothing', async () => {
    const l = lab();
    await ok(l, ['reset', '--yes', '--delete-data', 'etcd']);
    for (const m of ALL) expect(await osState(l, m), m).toEqual(before.get(m));
    expect((await ok(l, ['reset', '--yes', '--delete-data', 'etcd'])).json.changed).toBe(0);
    // Proved as before the first up: the next suite that needs fresh machines (cluster) takes them so,
    // and its first up is the one that builds the cluster again after this reset.
    markFresh();
  });
});
