// The whole cluster on the shared 1-server 2-worker lab (test/e2e/helpers/shared-lab.ts; given
// machines as before hardway's first up: day-two's reset, which proved it, or a reset here), with the real Kubernetes v1.20.2 server binaries
// (built from Debian's source package by `hardway download --source debian`), Debian's etcd,
// containerd, runc, CNI plugins and kubectl, and the offline images of `hardway build-images`:
// `hardway up --dry-run` on the fresh machines changes nothing; `hardway up` makes both nodes Ready;
// the smoke test passes; pods reach each other across nodes and through a ClusterIP Service; a
// rerun changes nothing; cloud-init's /etc/hosts drift is named by verify and undone by pin-hosts;
// a reboot comes back Ready; a new pod subnet touches only what it must; verify names what is broken.
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contains, parseCidr, parseIPv4, type Network } from '../../src/net/ipv4.ts';
import type { Lab } from './helpers/lab.ts';
import { useSharedCluster } from './helpers/shared-lab.ts';
import { HOSTS_MARKERS } from '../../src/layout.ts';
import { WEB_IMAGE } from '../../src/images/names.ts';
import {
  eventually, failures, filesChangedSince, invocationIds, jumpboxKubectl, kubeletStarted, markTime, newLog, podNetns, unwrapSudo,
  remoteSha256, runJson, runtimeState, serviceStates, statuses, type RunSummary,
} from './helpers/cluster.ts';

const lab = useSharedCluster({ fresh: true });
const UP = ['up', '--keep-going', '--ready-timeout', '180'];
const WORKER_SERVICES = ['containerd', 'kubelet', 'kube-proxy', 'hardway-pod-routes'] as const;

const ip = (l: Lab, host: string) => l.machines.find((m) => m.hostname === host)!.ip;
const workers = (l: Lab) => l.machines.filter((m) => m.role === 'worker');
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const net = (cidr: string) => (parseCidr(cidr) as { ok: true; net: Network }).net;

/** Expects a run in which nothing failed or was skipped. */
function expectNoFailures(s: RunSummary): void {
  expect(failures(s), JSON.stringify(failures(s), null, 1)).toEqual({});
  expect(s.results.filter((r) => r.status === 'skipped')).toEqual([]);
}

/** `name Ready-status kubelet-version` of every node, from the host with the jumpbox kubeconfig. */
async function nodes(l: Lab): Promise<string[]> {
  const out = await jumpboxKubectl(l, ['get', 'nodes', '-o',
    'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status} {.status.nodeInfo.kubeletVersion}{"\\n"}{end}']);
  return out.trim().split('\n').sort();
}

const READY = ['node-0 True v1.20.2', 'node-1 True v1.20.2'];

/** A pod of the offline web image pinned to one node. */
function webPod(name: string, node: string): string {
  return JSON.stringify({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: name } },
    spec: { nodeName: node, containers: [{ name: 'web', image: WEB_IMAGE, imagePullPolicy: 'Never' }] },
  });
}

describe('hardway up on a 1-server 2-worker lab with the real Kubernetes v1.20.2 binaries', () => {
  let renderDir = '';
  beforeAll(() => {
    renderDir = mkdtempSync(join(tmpdir(), 'hardway-e2e-cl-render-'));
  });
  afterAll(() => {
    if (renderDir) rmSync(renderDir, { recursive: true, force: true });
  });

  it('up --dry-run on the fresh machines shows the planned changes and changes nothing on any machine (secrets hidden)', async () => {
    const l = lab();
    for (const c of ['certs', 'kubeconfigs', 'encryption-config']) {
      const r = await l.hardway([c]);
      expect(r.code, `${c}: ${r.stderr}`).toBe(0);
    }
    // Every file of pki/, pki/machines/<hostname>/ included.
    const pkiFiles = () => (readdirSync(join(l.dir, 'pki'), { recursive: true }) as string[]).filter((f) => statSync(join(l.dir, 'pki', f)).isFile()).sort();
    const pki = pkiFiles();
    const pkiSums = pki.map((f) => sha256(join(l.dir, 'pki', f)));
    const watched = ['/etc/hosts', '/etc/cloud/templates/hosts.debian.tmpl', '/etc/hostname', '/var/lib/kubernetes/ca.key',
      '/usr/local/bin/etcd', '/etc/systemd/system/kubelet.service', '/etc/containerd/config.toml', '/etc/cni/net.d/10-bridge.conf',
      '/etc/systemd/system/hardway-pod-routes.service', '/var/lib/kubelet/kubelet.key'];
    const before = new Map<string, [Map<string, string>, string]>();
    for (const m of l.machines) {
      before.set(m.hostname, [await remoteSha256(l, m.hostname, watched), await runtimeState(l, m.hostname)]);
      await markTime(l, m.hostname);
    }
    // The fresh machines have none of what up installs.
    for (const [, [sums]] of before) {
      for (const p of watched.slice(3)) expect(sums.get(p), p).toBe('missing');
    }

    const r = await l.hardway(['up', '--dry-run', '--api-timeout', '1', '--ready-timeout', '0']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Summary (dry run: nothing was changed):');
    expect(r.stdout).toContain('server: bootstrap-etcd: would change');
    expect(r.stdout).toContain('server:   put /usr/local/bin/etcd 0755 root:root (missing)');
    expect(r.stdout).toContain('server:   put /var/lib/kubernetes/ca.key 0600 root:root (secret) (missing)');
    // The jumpbox reaches the lab's API server address: kubelet-rbac's apply is planned as a server-side apply from here.
    expect(r.stdout).toContain('server:   api: apply clusterrole/system:kube-apiserver-to-kubelet, clusterrolebinding/system:kube-apiserver-to-kubelet (');
    for (const w of workers(l)) {
      expect(r.stdout).toContain(`${w.hostname}:   put /etc/systemd/system/kubelet.service 0644 root:root (missing)`);
      expect(r.stdout).toContain(`${w.hostname}:   put /etc/containerd/config.toml 0644 root:root (missing)`);
      expect(r.stdout).not.toContain(`${w.hostname}:   put /var/lib/kubernetes/ca.key`);
    }
    expect(r.stdout).toMatch(/^\d+ ok, \d+ would change, 0 failed, 0 unreachable \(\d+ planned changes\)$/m);
    // Secrets never appear: no key material, not the encryption key.
    const encKey = /secret: (\S+)/.exec(readFileSync(join(l.dir, 'pki/encryption-config.yaml'), 'utf8'))![1]!;
    expect(r.stdout + r.stderr).not.toContain('PRIVATE KEY');
    expect(r.stdout + r.stderr).not.toContain(encKey);

    for (const m of l.machines) {
      expect(await filesChangedSince(l, m.hostname), `files written on ${m.hostname}`).toEqual([]);
      const [sums, state] = before.get(m.hostname)!;
      expect(await remoteSha256(l, m.hostname, watched)).toEqual(sums);
      expect(await runtimeState(l, m.hostname)).toBe(state);
    }
    // Not even pki/ on the jumpbox changed.
    expect(pkiFiles()).toEqual(pki);
    expect(pki.map((f) => sha256(join(l.dir, 'pki', f)))).toEqual(pkiSums);
  });

  it('up builds a cluster whose nodes are Ready (v1.20.2): etcd over TLS, containerd with the rendered config, services, key placement, pod networks and routes that survive a reboot', async () => {
    const l = lab();
    const up = await runJson(l, UP);
    expect(up.code, up.stderr).toBe(0);
    expectNoFailures(up.json);
    // No Node warning on the way (a listener leak in the direct API client once showed in the dns step).
    expect(up.stderr).not.toMatch(/MaxListenersExceededWarning|\(node:\d+\) Warning/);
    // Every step that installs something changed something on every machine: not the checks (preflight,
    // verify), nor etcd-snapshots, which installs nothing while etcd.snapshots is unset.
    const installing = up.json.results.filter((r) => !['preflight', 'verify', 'etcd-snapshots'].includes(r.step));
    expect(installing.filter((r) => r.status !== 'changed').map((r) => `${r.step}@${r.machine} ${r.status}`)).toEqual([]);
    // From the host, with the jumpbox's own kubeconfig: both nodes Ready, the version built here.
    expect(await nodes(l)).toEqual(READY);

    // etcd answers over TLS with the client certificate hardway issued, and only with it.
    const etcdTls = '--endpoints=https://127.0.0.1:2379 --cacert=/etc/etcd/ca.crt --command-timeout=3s';
    const clientCert = '--cert=/var/lib/kubernetes/etcd-client.crt --key=/var/lib/kubernetes/etcd-client.key';
    const health = await l.ssh('server', `ETCDCTL_API=3 etcdctl ${etcdTls} ${clientCert} endpoint health 2>&1`);
    expect(health.code, health.stdout).toBe(0);
    expect(health.stdout).toContain('https://127.0.0.1:2379 is healthy');
    const installed = await remoteSha256(l, 'server', ['/var/lib/kubernetes/etcd-client.crt', '/var/lib/kubernetes/etcd-client.key', '/etc/etcd/ca.crt']);
    expect([...installed.values()]).toEqual(['pki/etcd-client.crt', 'pki/etcd-client.key', 'pki/etcd-ca.crt'].map((f) => sha256(join(l.dir, f))));
    expect((await l.ssh('server', `ETCDCTL_API=3 timeout 20 etcdctl ${etcdTls} endpoint health`)).code).not.toBe(0);

    // Every rendered file is installed byte for byte (hosts blocks are merged, not installed).
    const render = await l.hardway(['render', '--out', renderDir]);
    expect(render.code, render.stderr).toBe(0);
    for (const m of l.machines) {
      const root = join(renderDir, m.hostname);
      const files = (readdirSync(root, { recursive: true }) as string[])
        .filter((f) => !f.endsWith('.hardway-block') && statSync(join(root, f)).isFile());
      const live = await remoteSha256(l, m.hostname, files.map((f) => `/${f}`));
      for (const f of files) expect(live.get(`/${f}`), `${m.hostname}:/${f}`).toBe(sha256(join(root, f)));
      if (m.role === 'worker') expect(files).toContain('etc/containerd/config.toml');
    }

    for (const w of workers(l)) {
      // containerd runs with that config: systemd cgroups for runc.
      expect(await l.run(w.hostname, 'containerd config dump')).toMatch(/^\s*SystemdCgroup = true$/m);
      expect(await serviceStates(l, w.hostname, WORKER_SERVICES)).toEqual(Object.fromEntries(WORKER_SERVICES.map((s) => [s, 'active'])));
    }

    // Keys: 0600 root everywhere; the CA key on the server only (no worker holds its bytes under any name).
    const secrets = "find /var/lib/kubernetes /var/lib/kubelet /var/lib/kube-proxy /etc/etcd \\( -name '*.key' -o -name '*kubeconfig' -o -name 'encryption-config.yaml' \\) -printf '%m %u %p\\n' 2>/dev/null | sort -k3";
    expect((await l.run('server', secrets)).trim().split('\n')).toEqual([
      '/etc/etcd/server.key', '/var/lib/kubernetes/admin.kubeconfig', '/var/lib/kubernetes/ca.key', '/var/lib/kubernetes/encryption-config.yaml',
      '/var/lib/kubernetes/etcd-client.key', '/var/lib/kubernetes/kube-api-server.key', '/var/lib/kubernetes/kube-controller-manager.kubeconfig',
      '/var/lib/kubernetes/kube-scheduler.kubeconfig', '/var/lib/kubernetes/service-accounts.key',
    ].map((p) => `600 root ${p}`));
    expect((await remoteSha256(l, 'server', ['/var/lib/kubernetes/ca.key'])).get('/var/lib/kubernetes/ca.key')).toBe(sha256(join(l.dir, 'pki/ca.key')));
    const caKeySize = readFileSync(join(l.dir, 'pki/ca.key')).length;
    for (const w of workers(l)) {
      expect((await l.run(w.hostname, secrets)).trim().split('\n')).toEqual(
        ['/var/lib/kube-proxy/kubeconfig', '/var/lib/kubelet/kubeconfig', '/var/lib/kubelet/kubelet.key'].map((p) => `600 root ${p}`));
      const sameSize = await l.run(w.hostname, `find / -xdev -type f -size ${caKeySize}c -exec sha256sum {} + 2>/dev/null || true`);
      expect(sameSize).not.toContain(sha256(join(l.dir, 'pki/ca.key')));
      expect(await l.run(w.hostname, 'find / -xdev -name ca.key 2>/dev/null || true')).toBe('');
    }

    // A pod network namespace through the rendered CNI config gets an address from its worker's subnet.
    const podIp: Record<string, string> = {};
    for (const w of workers(l)) {
      podIp[w.hostname] = await podNetns(l, w.hostname, 'e2e-pod');
      expect(contains(net(w.podSubnet!), parseIPv4(podIp[w.hostname]!)!), `${podIp[w.hostname]} in ${w.podSubnet}`).toBe(true);
    }

    // node-0's pod reaches node-1's pod through the plain route via node-1 (no overlay device anywhere).
    await l.run('node-1', `ip netns exec e2e-pod setsid socat TCP-LISTEN:7777,reuseaddr,fork SYSTEM:'echo pong from node-1 pod' </dev/null >/dev/null 2>&1 &`);
    expect(await l.run('node-0', `ip route get ${podIp['node-1']}`)).toContain(`via ${ip(l, 'node-1')} dev host0`);
    // -t 5: after sending, wait up to 5 s for the answer (socat's default 0.5 s loses slow replies).
    const ask = `echo ping | ip netns exec e2e-pod socat -t 5 -T 5 - TCP:${podIp['node-1']}:7777,connect-timeout=5`;
    expect(await eventually(() => l.run('node-0', ask), 10)).toBe('pong from node-1 pod\n');
    for (const w of workers(l)) expect(await l.run(w.hostname, 'ip -d link show')).not.toMatch(/\b(vxlan|geneve|ipip|gre|wireguard)\b/);
    // The route is what carries it: without it node-0 cannot reach the pod; hardway routes puts it back.
    await l.run('node-0', `ip route del ${workers(l)[1]!.podSubnet} via ${ip(l, 'node-1')}`);
    expect((await l.ssh('node-0', ask)).code).not.toBe(0);
    const fix = await runJson(l, ['routes', '--node', 'node-0']);
    expect(statuses(fix.json)).toEqual(['changed node-0 routes']);
    expect(await l.run('node-0', ask)).toBe('pong from node-1 pod\n');

    // After a real reboot of node-1 its routes and every name are still there, its services run again.
    const reboot = await l.hardway(['lab', 'reboot', '--name', l.name, 'node-1']);
    expect(reboot.code, reboot.stderr).toBe(0);
    await eventually(async () => {
      expect(await serviceStates(l, 'node-1', WORKER_SERVICES)).toEqual(Object.fromEntries(WORKER_SERVICES.map((s) => [s, 'active'])));
    });
    expect(await l.run('node-1', 'ip -4 route show')).toContain(`${workers(l)[0]!.podSubnet} via ${ip(l, 'node-0')} dev host0`);
    const names = l.machines.flatMap((m) => [m.hostname, m.fqdn]);
    const resolved = await l.run('node-1', names.map((n) => `echo ${n} $(getent hosts ${n} | awk '{print $1; exit}')`).join('; '));
    expect(resolved.trim().split('\n')).toEqual(l.machines.flatMap((m) => [`${m.hostname} ${m.ip}`, `${m.fqdn} ${m.ip}`]));
  });

  it('hardway smoke passes every check with the offline web image', async () => {
    const l = lab();
    const r = await l.hardway(['smoke', '--web-image', WEB_IMAGE]);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    const out = r.stdout + r.stderr;
    expect(out).toContain('secret stored encrypted in etcd (k8s:enc:aescbc:v1:key1)');
    expect(out).toMatch(/pod hardway-smoke-\S+ Running on node-[01]/);
    expect(out).toContain('logs, exec and port-forward work');
    expect(out).toMatch(/NodePort \d+ answers on node-[01]/);
    expect(out).toMatch(/names resolve in pods on node-0 and node-1 \(kubernetes\.default -> 10\.32\.0\.1, hardway-smoke -> 10\.32\.0\.\d+\), and http:\/\/hardway-smoke\/ answers there/);
    // A second run replaces the objects and still passes (an old ReplicaSet's Terminating pod is never picked).
    const again = await l.hardway(['smoke', '--web-image', WEB_IMAGE]);
    expect(again.code, `${again.stdout}\n${again.stderr}`).toBe(0);
  });

  it("a pod on node-0 reaches a pod on node-1 by pod IP, and a ClusterIP Service from the other node (kube-proxy's rules), by its name too (CoreDNS)", async () => {
    const l = lab();
    const podsFile = join(l.dir, 'e2e-pods.json');
    writeFileSync(podsFile, `{"apiVersion":"v1","kind":"List","items":[${webPod('e2e-a', 'node-0')},${webPod('e2e-b', 'node-1')}]}`);
    await jumpboxKubectl(l, ['apply', '-f', podsFile]);
    await jumpboxKubectl(l, ['wait', '--for=condition=Ready', 'pod/e2e-a', 'pod/e2e-b', '--timeout=120s']);
    const podIp = async (name: string) => (await jumpboxKubectl(l, ['get', 'pod', name, '-o', 'jsonpath={.status.podIP}'])).trim();
    const [a, b] = [await podIp('e2e-a'), await podIp('e2e-b')];
    expect(contains(net(workers(l)[0]!.podSubnet!), parseIPv4(a)!), `${a} in node-0's subnet`).toBe(true);
    expect(contains(net(workers(l)[1]!.podSubnet!), parseIPv4(b)!), `${b} in node-1's subnet`).toBe(true);
    // No -T: Debian's static busybox wget segfaults with it; kubectl's --request-timeout bounds the wait.
    const fetch = (from: string, url: string) => jumpboxKubectl(l, ['exec', from, '--', 'wget', '-q', '-O', '-', url]);
    expect(await fetch('e2e-a', `http://${b}/`)).toContain('hardway');
    // A ClusterIP Service in front of e2e-a, asked from node-1's pod: DNAT by kube-proxy on node-1.
    await jumpboxKubectl(l, ['expose', 'pod', 'e2e-a', '--name=e2e-a', '--port=80']);
    const clusterIp = (await jumpboxKubectl(l, ['get', 'service', 'e2e-a', '-o', 'jsonpath={.spec.clusterIP}'])).trim();
    expect(contains(net('10.32.0.0/24'), parseIPv4(clusterIp)!), clusterIp).toBe(true);
    expect(await eventually(() => fetch('e2e-b', `http://${clusterIp}/`), 60)).toContain('hardway');
    // Cluster DNS, from a pod on each worker: the API's name and the Service's resolve (busybox's
    // nslookup asks the pod's nameserver, CoreDNS at 10.32.0.10), and node-1's pod fetches the page of
    // node-0's pod by the Service's short name (the pod's search list).
    const lookup = async (from: string, name: string) => {
      const out = await jumpboxKubectl(l, ['exec', from, '--', 'nslookup', name]);
      expect(out).toMatch(/^Server:\s+10\.32\.0\.10$/m);
      return /^Name:\s+\S+\nAddress:?\s+(\S+)$/m.exec(out)?.[1];
    };
    for (const from of ['e2e-a', 'e2e-b']) {
      expect(await lookup(from, 'kubernetes.default.svc.cluster.local'), from).toBe('10.32.0.1');
      await eventually(async () => expect(await lookup(from, 'e2e-a.default.svc.cluster.local'), from).toBe(clusterIp), 60);
    }
    expect(await eventually(() => fetch('e2e-b', 'http://e2e-a/'), 60)).toContain('hardway');
    await jumpboxKubectl(l, ['delete', 'service', 'e2e-a']);
    await jumpboxKubectl(l, ['delete', '-f', podsFile, '--wait=false']);
  });

  it('a second up --json reports "changed": 0', async () => {
    const l = lab();
    const again = await runJson(l, UP);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json.changed, statuses(again.json).join('\n')).toBe(0);
    expectNoFailures(again.json);
    expect(again.json.results.every((r) => r.status === 'unchanged' && r.changes === 0)).toBe(true);
  });

  it('cloud-init rewriting /etc/hosts on node-1: verify names the cause, pin-hosts --node node-1 alone brings node-1 back to Ready', async () => {
    const l = lab();
    // The failure of the worker write-up: the pinned block gone from the template and /etc/hosts,
    // cloud-init regenerates /etc/hosts (as at every boot), the kubelet restarts.
    const strip = `sed -i '/${HOSTS_MARKERS.begin}/,/${HOSTS_MARKERS.end}/d'`;
    await l.run('node-1', `${strip} /etc/cloud/templates/hosts.debian.tmpl /etc/hosts && cloud-init single --name update_etc_hosts --frequency always >/dev/null 2>&1 && systemctl restart kubelet`);
    expect((await l.ssh('node-1', 'getent hosts server.kubernetes.local')).code).not.toBe(0);
    const bad = await runJson(l, ['verify', '--ready-timeout', '0']);
    expect(bad.code).toBe(1);
    expect(failures(bad.json)['verify@node-1']).toContain(`server.kubernetes.local does not resolve on node-1 (want ${ip(l, 'server')}): the kubelet and kube-proxy here cannot reach the API server`);
    // The node itself goes NotReady once the controller manager notices (grace period 40 s).
    await eventually(async () => expect(await nodes(l)).toContain('node-1 Unknown v1.20.2'), 120);

    const fix = await runJson(l, ['pin-hosts', '--node', 'node-1']);
    expect(fix.code, fix.stderr).toBe(0);
    expect(statuses(fix.json)).toEqual(['changed node-1 pin-hosts']);
    await eventually(async () => expect(await nodes(l)).toEqual(READY), 120);
  });

  it('hardway lab reboot node-0: node-0 Ready again with its routes and names, and a second up changes nothing', async () => {
    const l = lab();
    const rebootedAt = Date.now();
    const reboot = await l.hardway(['lab', 'reboot', '--name', l.name, 'node-0']);
    expect(reboot.code, reboot.stderr).toBe(0);
    // Ready as posted by the kubelet that started after the reboot (not a status left from before).
    await eventually(async () => {
      expect(await nodes(l)).toEqual(READY);
      const beat = await jumpboxKubectl(l, ['get', 'node', 'node-0', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}']);
      expect(Date.parse(beat.trim())).toBeGreaterThan(rebootedAt - 1000);
    }, 180);
    expect(await l.run('node-0', 'ip -4 route show')).toContain(`${workers(l)[1]!.podSubnet} via ${ip(l, 'node-1')} dev host0`);
    const names = l.machines.flatMap((m) => [m.hostname, m.fqdn]);
    const resolved = await l.run('node-0', names.map((n) => `echo ${n} $(getent hosts ${n} | awk '{print $1; exit}')`).join('; '));
    expect(resolved.trim().split('\n')).toEqual(l.machines.flatMap((m) => [`${m.hostname} ${m.ip}`, `${m.fqdn} ${m.ip}`]));
    const again = await runJson(l, UP);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json.changed, statuses(again.json).join('\n')).toBe(0);
  });

  it("a new pod subnet for node-1 changes only node-1's CNI and kubelet configs, restarts only its kubelet, and routes then update the others", async () => {
    const l = lab();
    const machinesTxt = join(l.dir, 'machines.txt');
    const original = readFileSync(machinesTxt, 'utf8');
    const oldSubnet = workers(l)[1]!.podSubnet!;
    const newSubnet = '10.200.9.0/24';
    const services = ['kubelet', 'kube-proxy', 'containerd'] as const;
    const ids = async () => ({ 'node-0': await invocationIds(l, 'node-0', services), 'node-1': await invocationIds(l, 'node-1', services) });
    // A pod the kubelet runs on node-1 (with an address of the old subnet): the change must move it.
    const podFile = join(l.dir, 'e2e-moved.json');
    writeFileSync(podFile, webPod('e2e-moved', 'node-1'));
    await jumpboxKubectl(l, ['apply', '-f', podFile]);
    await jumpboxKubectl(l, ['wait', '--for=condition=Ready', 'pod/e2e-moved', '--timeout=120s']);
    /** e2e-moved's address once it is Ready with one inside `subnet` (the kubelet made its sandbox anew). */
    const movedInto = (subnet: string) => eventually(async () => {
      const [ready, podIp] = (await jumpboxKubectl(l, ['get', 'pod', 'e2e-moved', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.podIP}'])).trim().split(' ');
      expect(contains(net(subnet), parseIPv4(podIp ?? '') ?? -1), `e2e-moved at ${podIp} in ${subnet}`).toBe(true);
      expect(ready).toBe('True');
      return podIp!;
    }, 120);
    await movedInto(oldSubnet);
    try {
      // A pod on node-1 in the old subnet: its bridge cni0 now holds the old gateway address.
      const oldPod = await podNetns(l, 'node-1', 'e2e-old');
      expect(contains(net(oldSubnet), parseIPv4(oldPod)!)).toBe(true);
      const oldGateway = (await l.run('node-1', 'ip -4 -o addr show dev cni0')).match(/inet (\S+)/)![1]!;
      const before = await ids();
      const node0Files = await remoteSha256(l, 'node-0', ['/etc/cni/net.d/10-bridge.conf', '/var/lib/kubelet/kubelet-config.yaml']);
      writeFileSync(machinesTxt, original.replace(` ${oldSubnet}\n`, ` ${newSubnet}\n`));
      expect(readFileSync(machinesTxt, 'utf8')).toContain(`node-1 ${newSubnet}\n`);
      const logs = readdirSync(join(l.dir, 'logs'));

      const bw = await runJson(l, ['bootstrap-workers', '--node', 'node-1']);
      expect(bw.code, bw.stderr).toBe(0);
      expect(bw.json.results).toEqual([
        { step: 'worker-os', machine: 'node-1', status: 'unchanged', changes: 0 },
        { step: 'containerd', machine: 'node-1', status: 'unchanged', changes: 0 },
        { step: 'cni', machine: 'node-1', status: 'changed', changes: 3 },
        { step: 'kubelet', machine: 'node-1', status: 'changed', changes: 3 },
        { step: 'kube-proxy', machine: 'node-1', status: 'unchanged', changes: 0 },
        // Its rules are for the cluster CIDR, which holds the new subnet too.
        { step: 'pod-forwarding', machine: 'node-1', status: 'unchanged', changes: 0 },
      ]);
      // The run log: two uploads, the old gateway taken off the bridge, the pods' sandboxes stopped
      // (the kubelet makes them anew in the new subnet), the kubelet marked due (so a kill before its
      // restart still restarts it on the rerun) and restarted, all on node-1; no other machine was even asked.
      const log = newLog(l, logs);
      const uploads = [...log.matchAll(/^\S+ (\S+): upload (\S+) /gm)].map((m) => `${m[1]} ${m[2]}`);
      expect(uploads).toEqual(['node-1 /etc/cni/net.d/10-bridge.conf', 'node-1 /var/lib/kubelet/kubelet-config.yaml']);
      // As root runs them: the shared lab's login user sends each through sudo.
      const commands = [...log.matchAll(/^\S+ (\S+): \$ (.*)$/gm)].map((m) => `${m[1]} ${unwrapSudo(m[2]!)}`);
      expect(commands).toHaveLength(4);
      expect(commands[0]).toBe(`node-1 ip addr del ${oldGateway} dev cni0`);
      expect(commands[1]).toMatch(/^node-1 PATH=\$PATH:\/usr\/local\/bin; for s in \$\(ctr -n k8s\.io containers ls -q .* tasks kill -s SIGKILL /);
      expect(commands[2]).toBe('node-1 mkdir -p /var/lib/hardway/restart-due && touch /var/lib/hardway/restart-due/kubelet');
      expect(commands[3]).toMatch(/^node-1 \{ systemctl restart kubelet \|\| .* && rm -f \/var\/lib\/hardway\/restart-due\/kubelet && /);
      expect(log).not.toMatch(/^\S+ (node-0|server): /m);
      expect(await l.run('node-1', 'cat /etc/cni/net.d/10-bridge.conf')).toContain(`"subnet": "${newSubnet}"`);
      expect(await l.run('node-1', 'cat /var/lib/kubelet/kubelet-config.yaml')).toContain(newSubnet);
      expect(await remoteSha256(l, 'node-0', [...node0Files.keys()])).toEqual(node0Files);

      const after = await ids();
      expect(after['node-0']).toEqual(before['node-0']);
      expect(after['node-1'].kubelet).not.toBe(before['node-1'].kubelet);
      expect(after['node-1']['kube-proxy']).toBe(before['node-1']['kube-proxy']);
      expect(after['node-1'].containerd).toBe(before['node-1'].containerd);

      const routes = await runJson(l, ['routes']);
      expect(routes.code, routes.stderr).toBe(0);
      expect(statuses(routes.json)).toEqual(['changed server routes', 'changed node-0 routes', 'unchanged node-1 routes']);
      for (const m of ['server', 'node-0']) {
        const table = await l.run(m, 'ip -4 route show');
        expect(table).toContain(`${newSubnet} via ${ip(l, 'node-1')} dev host0`);
        expect(table).not.toContain(oldSubnet);
        const unit = await l.run(m, 'cat /etc/systemd/system/hardway-pod-routes.service');
        expect(unit).toContain(`ExecStart=/sbin/ip route replace ${newSubnet} via ${ip(l, 'node-1')}`);
        expect(unit).not.toContain(oldSubnet);
      }
      expect((await runJson(l, ['routes'])).json.changed).toBe(0);
      // The pod the kubelet runs there moved into the new subnet (same pod, a new sandbox), reachable again.
      const moved = await movedInto(newSubnet);
      const get = `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | socat -t 5 - TCP:${moved}:80,connect-timeout=5`;
      expect(await eventually(() => l.run('node-0', get), 30)).toContain('hardway');

      // A new pod on node-1 gets an address from the new subnet, and node-0's pod reaches it there.
      const newPod = await podNetns(l, 'node-1', 'e2e-new');
      expect(contains(net(newSubnet), parseIPv4(newPod)!), `${newPod} in ${newSubnet}`).toBe(true);
      await l.run('node-1', `ip netns exec e2e-new setsid socat TCP-LISTEN:7777,reuseaddr,fork SYSTEM:'echo pong from the new subnet' </dev/null >/dev/null 2>&1 &`);
      // A pod network namespace of its own on node-0 (node-0 was rebooted since the up test's).
      await podNetns(l, 'node-0', 'e2e-asker');
      const ask = `echo ping | ip netns exec e2e-asker socat -t 5 -T 5 - TCP:${newPod}:7777,connect-timeout=5`;
      expect(await eventually(() => l.run('node-0', ask), 10)).toBe('pong from the new subnet\n');
    } finally {
      // Later tests want the original cluster back.
      writeFileSync(machinesTxt, original);
    }
    const back = await runJson(l, ['bootstrap-workers', '--node', 'node-1']);
    expect(back.code, back.stderr).toBe(0);
    const routesBack = await runJson(l, ['routes']);
    expect(routesBack.code, routesBack.stderr).toBe(0);
    expect(await l.run('node-0', 'ip -4 route show')).toContain(`${oldSubnet} via ${ip(l, 'node-1')} dev host0`);
    await movedInto(oldSubnet);
    await jumpboxKubectl(l, ['delete', 'pod', 'e2e-moved', '--wait=false']);
  });

  it('verify passes on the converged workers and names what is broken without changing anything', async () => {
    const l = lab();
    // The test before restarted node-1's kubelet last: let it finish starting before the mark.
    for (const w of workers(l)) await kubeletStarted(l, w.hostname);
    const ok = await runJson(l, ['verify', '--node', 'node-0', '--node', 'node-1']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(statuses(ok.json)).toEqual(['unchanged node-0 verify', 'unchanged node-1 verify']);

    // Break two things: a stopped service on node-0, a key readable by others on node-1.
    await l.run('node-0', 'systemctl stop kube-proxy');
    await l.run('node-1', 'chmod 0644 /var/lib/kubelet/kubelet.key');
    const before = { 'node-0': await runtimeState(l, 'node-0'), 'node-1': await runtimeState(l, 'node-1') };
    for (const w of workers(l)) await markTime(l, w.hostname);

    const bad = await runJson(l, ['verify']);
    expect(bad.code).toBe(1);
    const f = failures(bad.json);
    expect(Object.keys(f).sort(), JSON.stringify(f, null, 1)).toEqual(['verify@node-0', 'verify@node-1']);
    expect(f['verify@node-0']).toBe('1 problem(s) on node-0:\n  - service kube-proxy is inactive');
    expect(f['verify@node-1']).toBe('1 problem(s) on node-1:\n  - /var/lib/kubelet/kubelet.key is readable by others (mode 644)');
    expect(bad.json.changed).toBe(0);

    // verify only read: the breakage is still there, nothing was written or restarted.
    for (const w of workers(l)) {
      expect(await filesChangedSince(l, w.hostname), `files written on ${w.hostname}`).toEqual([]);
      expect(await runtimeState(l, w.hostname)).toBe(before[w.hostname as 'node-0' | 'node-1']);
    }
    expect((await l.ssh('node-0', 'systemctl is-active kube-proxy')).stdout.trim()).toBe('inactive');
    expect((await l.run('node-1', 'stat -c %a /var/lib/kubelet/kubelet.key')).trim()).toBe('644');

    // The steps that own those things repair them, and verify passes again.
    expect((await runJson(l, ['bootstrap-workers', '--node', 'node-0', '--only', 'kube-proxy'])).code).toBe(0);
    expect((await runJson(l, ['distribute', '--node', 'node-1'])).code).toBe(0);
    const again = await runJson(l, ['verify', '--node', 'node-0', '--node', 'node-1']);
    expect(again.code, JSON.stringify(again.json)).toBe(0);
  });
});
