// Break and fix on a real cluster: the shared 1-server 2-worker lab with its registry
// (test/e2e/helpers/shared-lab.ts), the real Kubernetes v1.20.2 binaries and Debian's containerd 1.6. On the healthy
// cluster `hardway doctor` exits 0, changes nothing on any machine (file checksums, services and
// their InvocationIDs, files written, routes and sysctls); its time is printed (target: under 3 s).
// Then, one after
// the other, every `hardway lab break` scenario: doctor exits 1 and names that cause on that machine
// first with its fix; running exactly that fix makes doctor exit 0 and the nodes Ready again; for
// mirror-missing a pod pulls through the mirror again. worker-down measures the time until the API
// says NotReady (the controller manager's grace period). sandbox-image-missing and cni-plugin-missing
// leave the node Ready: a pod made there after the break stays ContainerCreating, doctor names the
// drift first (the pod in its evidence), and after the fix a new pod runs there. Then a fault made by
// hand: the kubelet's kubeconfig edited on a worker, the node NotReady, distribute's drift first.
// Last, doctor --bundle on the healthy cluster, and the sandbox image checks of up, verify and smoke.
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { PAUSE_IMAGE, WEB_IMAGE } from '../../src/images/names.ts';
import { unpackBundle } from '../helpers/unpack-bundle.ts';
import { loadavg } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCENARIOS, CACHED_IMAGE, scenarioFix } from '../../src/break/scenarios.ts';
import type { Finding } from '../../src/doctor/types.ts';
import { fixText, stepsFix } from '../../src/doctor/fixes.ts';
import { hostConnector, ONE_ATTEMPT } from '../../src/transport/index.ts';
import { loadInventory } from '../../src/inventory.ts';
import { sh } from '../../src/shell.ts';
import type { Lab } from './helpers/lab.ts';
import { SHARED_LAB, useSharedCluster } from './helpers/shared-lab.ts';
import { runCli } from '../helpers/cli.ts';
import {
  CLUSTER_SERVICES, eventually, filesChangedSince, invocationIds, jumpboxKubectl, markTime, remoteSha256, runtimeState, serviceStates,
} from './helpers/cluster.ts';

const lab = useSharedCluster();
const READY = ['node-0 True', 'node-1 True'];
/** The images containerd holds on a worker (nothing on the server). */
const IMAGES = 'PATH=$PATH:/usr/local/bin; (ctr -n k8s.io images ls -q 2>/dev/null || true) | sort';
/** The scenarios after which the node stays Ready but no new pod starts there. */
const STUCK = new Set(['sandbox-image-missing', 'cni-plugin-missing']);

/** `name Ready-status` of every node, from the host with the jumpbox kubeconfig. */
async function nodes(l: Lab): Promise<string[]> {
  const out = await jumpboxKubectl(l, ['get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}']);
  return out.trim().split('\n').sort();
}

/** `hardway doctor --json`: exit code and the parsed object. */
async function doctor(l: Lab): Promise<{ code: number; ok: boolean; findings: Finding[]; seconds: number }> {
  const started = Date.now();
  const r = await l.hardway(['doctor', '--json']);
  const seconds = (Date.now() - started) / 1000;
  try {
    return { code: r.code, seconds, ...(JSON.parse(r.stdout) as { ok: boolean; findings: Finding[] }) };
  } catch {
    throw new Error(`hardway doctor --json printed no JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
}

async function hardway(l: Lab, args: string[]): Promise<string> {
  const r = await l.hardway(args);
  if (r.code !== 0) throw new Error(`hardway ${args.join(' ')} failed (exit ${r.code}):\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

/** Runs `fix` as doctor printed it; then the nodes are Ready again and doctor finds nothing (exit 0). */
async function healsWith(l: Lab, fix: string): Promise<void> {
  await hardway(l, fix.split(' ').slice(1));
  await eventually(async () => expect(await nodes(l)).toEqual(READY), 180);
  const healed = await eventually(async () => {
    const d = await doctor(l);
    expect(d.findings).toEqual([]);
    return d;
  }, 60);
  expect(healed).toMatchObject({ code: 0, ok: true });
}

/**
 * Waits until the cluster is at rest: every node Ready, every CoreDNS pod ready and doctor finding nothing. A scenario's fix
 * can leave work for the cluster (a CoreDNS pod replaced after hosts-drift or a containerd restart
 * becomes ready tens of seconds later on a loaded host); the next scenario must start from rest, or
 * doctor rightly names that first.
 */
async function settled(l: Lab): Promise<void> {
  await eventually(async () => {
    expect(await nodes(l)).toEqual(READY);
    // Every CoreDNS pod ready, not only within doctor's grace for one that is starting: that grace
    // could run out during the scenario, and doctor would then rightly name it.
    expect(await jumpboxKubectl(l, ['get', 'deployment', 'coredns', '-n', 'kube-system', '-o', 'jsonpath={.status.readyReplicas}/{.spec.replicas}'])).toBe('2/2');
    const d = await doctor(l);
    expect(d.findings, JSON.stringify(d.findings, null, 1)).toEqual([]);
  }, 330);
}

/**
 * After a scenario failed: every machine started, the cluster put back with `up --keep-going`, the
 * test's pods deleted, so one failure is reported once and not again by every scenario after it.
 */
async function putBack(l: Lab): Promise<void> {
  for (const m of l.machines) await l.hardway(['lab', 'start', m.hostname, '--name', l.name]);
  await l.hardway(['up', '--keep-going', '--ready-timeout', '180']);
  await jumpboxKubectl(l, ['delete', 'pods', '--all', '-n', 'default', '--wait=false']).catch(() => undefined);
}

/** Runs a scenario; when it fails, puts the cluster back before the failure is reported. */
async function putBackOnFailure(l: Lab, scenario: () => Promise<void>): Promise<void> {
  try {
    await scenario();
  } catch (e) {
    await putBack(l).catch(() => undefined);
    throw e;
  }
}

/** Seconds for a bare SSH round trip to every machine at once, over the transport doctor uses: connect, `true`, close. */
async function bareRoundTrip(l: Lab): Promise<number> {
  const inv = loadInventory(join(l.dir, 'machines.txt'));
  const connect = hostConnector(inv, { dir: inv.dir, ...ONE_ATTEMPT });
  const started = Date.now();
  await Promise.all(inv.machines.map(async (m) => {
    const t = await connect({ name: m.hostname, machine: m });
    await t.exec(sh`true`);
    await t.close();
  }));
  return (Date.now() - started) / 1000;
}

/** A pod of `image` pinned to `node`, pulled as `policy` says. */
function pod(name: string, node: string, image: string, policy: 'Always' | 'IfNotPresent'): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: node, containers: [{ name: 'web', image, imagePullPolicy: policy }] } });
}

describe('hardway doctor and hardway lab break on a real 1+2 lab with a registry', () => {
  let tmp = '';
  beforeAll(async () => {
    const l = lab();
    const up = await l.hardway(['up', '--keep-going', '--ready-timeout', '180']);
    if (up.code !== 0) throw new Error(`hardway up failed (exit ${up.code}):\n${up.stderr}\n${up.stdout}`);
    tmp = mkdtempSync(join(tmpdir(), 'hardway-e2e-doc-'));
  });
  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('on the healthy cluster: exit 0, nothing changed on any machine (its time printed)', async () => {
    const l = lab();
    expect(await nodes(l)).toEqual(READY);
    // Pods a suite before left may still be starting, or going (cluster.test deletes its pods with
    // --wait=false, and a pod being deleted still says Running; seen on CI: the CNI's results and
    // address leases on node-1 rewritten while doctor ran): what their kubelet and CNI plugin write
    // is not doctor's. Measured from a cluster at rest: every pod Running or Succeeded, none being
    // deleted, and nothing under /var/lib/cni written for 10 s on any machine.
    await eventually(async () => {
      const phases = await jumpboxKubectl(l, ['get', 'pods', '--all-namespaces', '-o',
        'jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.metadata.deletionTimestamp}{"\\n"}{end}']);
      expect(phases.split('\n').filter((p) => p.trim() && !/ (Running|Succeeded) $/.test(p))).toEqual([]);
      for (const m of l.machines) {
        expect((await l.run(m.hostname, 'find /var/lib/cni -newermt "-10 seconds" -print 2>/dev/null || true')).trim(), `CNI state written on ${m.hostname}`).toBe('');
      }
    }, 180);
    const watched = ['/etc/hosts', '/etc/cloud/templates/hosts.debian.tmpl', '/etc/containerd/config.toml', '/etc/containerd/certs.d/localhost_5001_/hosts.toml',
      '/etc/cni/net.d/10-bridge.conf', '/var/lib/kubelet/kubeconfig', '/var/lib/kubelet/kubelet.crt', '/var/lib/kubernetes/kube-api-server.crt', '/var/lib/hardway/sha256.cache'];
    const before = new Map<string, unknown[]>();
    for (const m of l.machines) {
      before.set(m.hostname, [await remoteSha256(l, m.hostname, watched), await serviceStates(l, m.hostname, CLUSTER_SERVICES),
        await invocationIds(l, m.hostname, CLUSTER_SERVICES), await runtimeState(l, m.hostname), await l.run(m.hostname, IMAGES)]);
      await markTime(l, m.hostname);
    }
    const first = await doctor(l);
    expect(first.code, JSON.stringify(first.findings, null, 1)).toBe(0);
    expect(first).toMatchObject({ ok: true, findings: [] });
    // Doctor's time is printed, not asserted: speed is measured in benchmarks, and this host is
    // shared with other suites. Beside each in-process run (the CLI's own work, without Node's start
    // and the TypeScript load), a bare SSH round trip to every machine at once (connect, `true`).
    const runs: { doctor: number; bare: number }[] = [];
    for (let i = 0; i < 3; i++) {
      const bare = await bareRoundTrip(l);
      const started = Date.now();
      const r = await runCli(['doctor'], l.dir);
      runs.push({ doctor: (Date.now() - started) / 1000, bare });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/No problems found\.\n$/);
    }
    console.log(`doctor on the healthy lab (load ${loadavg()[0]!.toFixed(1)}): ${runs.map((r) => `${r.doctor.toFixed(2)} s (bare round trip ${r.bare.toFixed(2)} s)`).join(', ')} in process; ${first.seconds.toFixed(2)} s as a new CLI process (target: under 3 s)`);
    for (const m of l.machines) {
      expect(await filesChangedSince(l, m.hostname), `files written on ${m.hostname}`).toEqual([]);
      expect([await remoteSha256(l, m.hostname, watched), await serviceStates(l, m.hostname, CLUSTER_SERVICES),
        await invocationIds(l, m.hostname, CLUSTER_SERVICES), await runtimeState(l, m.hostname), await l.run(m.hostname, IMAGES)])
        .toEqual(before.get(m.hostname));
    }
  });

  for (const s of SCENARIOS) {
    // The machine each scenario breaks is its labMachine: both workers get some.
    it(`${s.name}: doctor names ${s.doctor.check} on ${s.labMachine} first; exactly its fix makes doctor exit 0 again`, async () => {
      const l = lab();
      const node = s.labMachine;
      // The scenario before may have ended on a node the kubelet is about to report NotReady again
      // (a containerd restart reaches its runtime check seconds later), or with a CoreDNS pod still
      // starting: start from a cluster at rest.
      await settled(l);
      await putBackOnFailure(l, async () => {
        let trap: (() => Promise<void>) | undefined;
        if (s.name === 'mirror-missing') trap = await mirrorTrap(l, node);
        const broke = Date.now();
        const out = await hardway(l, ['lab', 'break', s.name, '--node', node, '--yes']);
        expect(out).toContain(`${s.name} on ${node} (lab "${l.name}"):`);
        if (s.name === 'worker-down') {
          await eventually(async () => expect(await nodes(l)).toContain('node-1 Unknown'), 150);
          console.log(`worker-down: node-1 NotReady (Ready=Unknown) ${((Date.now() - broke) / 1000).toFixed(1)} s after its machine stopped (the controller manager's grace period)`);
        }
        await trap?.();
        if (s.name === 'dns-loop') await loopTaken(l, node);
        // Pod traffic into the broken node: a page of a pod on it, fetched by a pod on the other worker.
        const across = s.name === 'docker-forward' ? await podsAcross(l, node) : undefined;
        if (across) await eventually(async () => expect(await across()).toBe(false), 60);
        // A name of its own per scenario: the pod of the scenario before may still be going away.
        const stuck = `doc-stuck-${s.name}`;
        if (STUCK.has(s.name)) await stuckPod(l, stuck, node);

        const sick = await doctor(l);
        expect(sick.code).toBe(1);
        expect(sick.ok).toBe(false);
        const fix = scenarioFix(s, node, l.name);
        expect(sick.findings[0], JSON.stringify(sick.findings, null, 1)).toMatchObject({ machine: node, check: s.doctor.check, fix });
        console.log(`${s.name}: ${sick.findings[0]!.cause}\n  evidence: ${sick.findings[0]!.evidence}\n  fix: ${fix}`);
        if (STUCK.has(s.name)) {
          // The stuck pod is told after the drift that explains it (in its evidence, or a finding after it).
          expect(sick.findings[0]!.evidence + sick.findings.slice(1).map((f) => f.cause).join('')).toContain(stuck);
          await jumpboxKubectl(l, ['delete', 'pod', stuck, '--wait=false']);
        }

        await healsWith(l, fix);
        if (s.name === 'mirror-missing' || STUCK.has(s.name)) await pullsAgain(l, node, `doc-after-${s.name}`);
        if (across) {
          await eventually(async () => expect(await across()).toBe(true), 60);
          await jumpboxKubectl(l, ['delete', 'pod', 'doc-across-server', 'doc-across-client', '--wait=false']);
        }
      });
    });
  }

  it("cluster DNS broken while every CoreDNS pod runs Ready (the kube-dns Service selects no pod; the Corefile without the kubernetes plugin): doctor names the dns step's drift of that object first, the failed DNS query in its evidence; its fix as printed makes doctor clean and names resolve in a pod again", async () => {
    const l = lab();
    await settled(l);
    const asker = 'doc-names';
    writeFileSync(join(tmp, `${asker}.json`), pod(asker, 'node-1', CACHED_IMAGE, 'IfNotPresent'));
    await jumpboxKubectl(l, ['apply', '-f', join(tmp, `${asker}.json`)]);
    await eventually(async () => expect(await jumpboxKubectl(l, ['get', 'pod', asker, '-o', 'jsonpath={.status.phase}'])).toBe('Running'), 120);
    const resolves = async () => (await jumpboxKubectl(l, ['exec', asker, '--', 'nslookup', 'kubernetes.default.svc.cluster.local']).catch((e: Error) => e.message)).includes('10.32.0.1');
    expect(await resolves()).toBe(true);
    const corefile = await jumpboxKubectl(l, ['get', 'configmap', 'coredns', '-n', 'kube-system', '-o', 'jsonpath={.data.Corefile}']);
    const faults: [string, () => Promise<unknown>][] = [
      ['service/kube-dns', () => jumpboxKubectl(l, ['-n', 'kube-system', 'patch', 'service', 'kube-dns', '-p', JSON.stringify({ spec: { selector: { 'k8s-app': 'no-such-pod' } } })])],
      ['configmap/coredns', async () => {
        // Every name to the node's resolvers, none from the API: CoreDNS still starts, runs and is Ready.
        const without = corefile.replace(/\n\s*kubernetes [^{]*\{[^}]*\}/, '');
        expect(without).not.toContain('kubernetes ');
        await jumpboxKubectl(l, ['-n', 'kube-system', 'patch', 'configmap', 'coredns', '-p', JSON.stringify({ data: { Corefile: without } })]);
        await jumpboxKubectl(l, ['-n', 'kube-system', 'rollout', 'restart', 'deployment', 'coredns']);
        await jumpboxKubectl(l, ['-n', 'kube-system', 'rollout', 'status', 'deployment', 'coredns', '--timeout=180s']);
      }],
    ];
    const fix = fixText(stepsFix(['dns'], 'server'), '')!;
    for (const [object, breakIt] of faults) {
      await putBackOnFailure(l, async () => {
        await breakIt();
        await eventually(async () => expect(await resolves()).toBe(false), 150);
        expect(await jumpboxKubectl(l, ['get', 'deployment', 'coredns', '-n', 'kube-system', '-o', 'jsonpath={.status.readyReplicas}/{.spec.replicas}'])).toBe('2/2');
        const sick = await doctor(l);
        expect(sick.code).toBe(1);
        expect(sick.findings[0], JSON.stringify(sick.findings, null, 1)).toMatchObject({ machine: 'server', check: 'drift', fix });
        expect(sick.findings[0]!.evidence).toContain(object);
        expect(sick.findings[0]!.evidence).toContain('DNS query for kubernetes.default.svc.cluster.local sent to 10.32.0.10:53 from ');
        console.log(`${object} changed: ${sick.findings[0]!.cause}\n  evidence: ${sick.findings[0]!.evidence}\n  fix: ${fix}`);
        await hardway(l, fix.split(' ').slice(1));
        await eventually(async () => expect(await resolves()).toBe(true), 180);
        await settled(l);
      });
    }
    await jumpboxKubectl(l, ['delete', 'pod', asker, '--wait=false']);
  });

  it("a worker's kubelet kubeconfig changed by hand: node NotReady; doctor names distribute's drift first (no secret shown); its fix as printed heals it", async () => {
    const l = lab();
    const node = 'node-1';
    await eventually(async () => expect(await nodes(l)).toEqual(READY), 120);
    await l.run(node, `sed -i 's|^\\( *server:\\).*|\\1 https://${SHARED_LAB.unused}:6443|' /var/lib/kubelet/kubeconfig && grep -q ${SHARED_LAB.unused} /var/lib/kubelet/kubeconfig && systemctl restart kubelet`);
    await eventually(async () => expect(await nodes(l)).toContain('node-1 Unknown'), 150);
    const sick = await doctor(l);
    expect(sick.code).toBe(1);
    const fix = 'hardway distribute --node node-1';
    expect(sick.findings[0], JSON.stringify(sick.findings, null, 1)).toMatchObject({ machine: node, check: 'drift', fix });
    expect(sick.findings[0]!.evidence).toContain('/var/lib/kubelet/kubeconfig');
    expect(sick.findings[0]!.evidence).toContain('kubectl get nodes: node-1 Ready=Unknown');
    console.log(`kubeconfig by hand: ${sick.findings[0]!.cause}\n  evidence: ${sick.findings[0]!.evidence}\n  fix: ${fix}`);
    // No secret in what doctor printed: not the node's key, nor its kubeconfig's credentials.
    const out = JSON.stringify(sick);
    const key = readFileSync(join(l.dir, 'pki/machines/node-1/kubelet.key'), 'utf8');
    expect(out).not.toContain('PRIVATE KEY');
    expect(out).not.toContain(Buffer.from(key).toString('base64').slice(0, 40));
    await healsWith(l, fix);
    await pullsAgain(l, node, 'doc-after-kubeconfig');
  });

  /**
   * dns-loop has taken hold once every CoreDNS pod on `node` crashed at least once (or none runs
   * there), as a user meets it. A pod still being made there when the fix runs is not replaced by it:
   * the dns step replaces the pods that crash, and this one has not yet.
   */
  async function loopTaken(l: Lab, node: string): Promise<void> {
    await eventually(async () => {
      const out = await jumpboxKubectl(l, ['get', 'pods', '-n', 'kube-system', '-l', 'k8s-app=kube-dns', '--field-selector', `spec.nodeName=${node}`,
        '-o', 'jsonpath={range .items[*]}{.metadata.name} restarts={.status.containerStatuses[0].restartCount}{"\\n"}{end}']);
      for (const line of out.split('\n').filter((x) => x.trim())) expect(line).toMatch(/ restarts=[1-9]/);
    }, 180);
  }

  /**
   * A web pod on `node` and a pod on the other worker; says whether the second fetches the first's
   * page by its pod IP (traffic that `node` forwards into its pod network).
   */
  async function podsAcross(l: Lab, node: string): Promise<() => Promise<boolean>> {
    const other = READY.map((r) => r.split(' ')[0]!).find((n) => n !== node)!;
    for (const [name, on] of [['doc-across-server', node], ['doc-across-client', other]] as const) {
      writeFileSync(join(tmp, `${name}.json`), JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name },
        spec: { nodeName: on, containers: [{ name: 'web', image: CACHED_IMAGE, imagePullPolicy: 'IfNotPresent' }] } }));
      await jumpboxKubectl(l, ['apply', '-f', join(tmp, `${name}.json`)]);
    }
    const ip = await eventually(async () => {
      const phases = await jumpboxKubectl(l, ['get', 'pod', 'doc-across-server', 'doc-across-client', '-o', 'jsonpath={.items[*].status.phase}']);
      expect(phases).toBe('Running Running');
      return jumpboxKubectl(l, ['get', 'pod', 'doc-across-server', '-o', 'jsonpath={.status.podIP}']);
    }, 120);
    return async () => (await jumpboxKubectl(l, ['exec', 'doc-across-client', '--', 'sh', '-c', `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${ip} 80`])
      .catch((e: Error) => e.message)).includes('200 OK');
  }

  /** A pod pinned to node that cannot start there: made, then waited for until its sandbox fails (a warning event). */
  async function stuckPod(l: Lab, name: string, node: string): Promise<void> {
    const file = join(tmp, `${name}.json`);
    writeFileSync(file, pod(name, node, CACHED_IMAGE, 'IfNotPresent'));
    await jumpboxKubectl(l, ['apply', '-f', file]);
    await eventually(async () => expect(await jumpboxKubectl(l, ['get', 'events', '--field-selector', `involvedObject.name=${name},type=Warning`, '-o', 'jsonpath={.items[*].reason}']))
      .toContain('FailedCreatePodSandBox'), 120);
  }

  it('doctor --bundle: every machine\'s services, journals, checksums, routes and configs, the cluster\'s nodes, pods and events; no secret of pki/ in it', async () => {
    const l = lab();
    await eventually(async () => expect(await nodes(l)).toEqual(READY), 120);
    const file = join(tmp, 'bundle.tar.gz');
    const r = await l.hardway(['doctor', '--bundle', file]);
    expect(r.stderr).toMatch(/support bundle: .*bundle\.tar\.gz \(\d+ files; no key, token or kubeconfig of pki\/ in it\)/);
    const files = unpackBundle(file);
    const at = (rel: string) => files.get(`hardway-doctor-bundle/${rel}`) ?? '';
    // The same report: wrapped to 80 columns on the pipe, whole lines in the bundle.
    const flatText = (t: string) => t.replace(/\s+/g, ' ').trim();
    expect(flatText(at('doctor.txt'))).toBe(flatText(r.stdout));
    expect(JSON.parse(at('doctor.json'))).toHaveProperty('findings');
    expect(at('cluster/nodes.txt')).toMatch(/^node-0 +Ready/m);
    expect(at('cluster/pods.txt')).toMatch(/^kube-system +coredns-/m);
    expect(at('cluster/events.txt')).not.toBe('');
    for (const m of l.machines) {
      const services = m.role === 'control-plane' ? ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] : ['containerd', 'kubelet', 'kube-proxy'];
      for (const svc of services) {
        expect(at(`machines/${m.hostname}/services.txt`)).toMatch(new RegExp(`^${svc} +enabled=enabled active=active$`, 'm'));
        expect(at(`machines/${m.hostname}/journal.txt`)).toContain(`== ${svc}\n`);
      }
      expect(at(`machines/${m.hostname}/routes.txt`)).toMatch(/^10\.200\.\d+\.0\/24 via /m);
      expect(at(`machines/${m.hostname}/etc-hosts`)).toContain(`${m.ip} ${m.hostname}.kubernetes.local ${m.hostname}`);
      const sums = at(`machines/${m.hostname}/files.txt`);
      const notOk = sums.split('\n').filter((x) => /^(differs|missing|unknown) /.test(x));
      console.log(`bundle: ${m.hostname}: ${sums.split('\n').filter((x) => /^ok /.test(x)).length} installed files as hardway would install them; others: ${notOk.join('; ') || 'none'}`);
      if (m.role === 'worker') {
        for (const f of ['/var/lib/kubelet/kubelet.crt', '/var/lib/kubelet/kubelet.key', '/var/lib/kubelet/kubeconfig']) expect(sums).toMatch(new RegExp(`^ok +${f}$`, 'm'));
        expect(at(`machines/${m.hostname}/cni/10-bridge.conf`)).toContain('"type": "bridge"');
        expect(at(`machines/${m.hostname}/kubelet-config.yaml`)).toContain('kind: KubeletConfiguration');
      } else {
        for (const f of ['/var/lib/kubernetes/ca.key', '/var/lib/kubernetes/encryption-config.yaml']) expect(sums).toMatch(new RegExp(`^ok +${f}$`, 'm'));
      }
    }
    const secrets = pkiSecrets(join(l.dir, 'pki'));
    expect(secrets.length).toBeGreaterThan(20);
    for (const [path, text] of files) {
      for (const secret of secrets) expect(text.includes(secret), `${path} holds a secret of pki/ (${secret.slice(0, 12)}...)`).toBe(false);
    }
  });

  it('the sandbox image: up refuses to start without images/pause.tar, verify names a worker whose containerd lost it, smoke prints the pod\'s event reason; hardway images puts it back', async () => {
    const l = lab();
    await eventually(async () => expect(await nodes(l)).toEqual(READY), 120);
    const pause = join(l.dir, 'images/pause.tar');
    renameSync(pause, `${pause}.aside`);
    try {
      const up = await l.hardway(['up']);
      expect(up.code, up.stdout + up.stderr).toBe(1);
      expect(up.stderr).toContain(`the sandbox image ${PAUSE_IMAGE} (sandboxImage in cluster.yaml) is not in images/ and no registry serves localhost/ names`);
      expect(up.stderr).toContain('run "hardway build-images"');
    } finally {
      renameSync(`${pause}.aside`, pause);
    }
    for (const w of ['node-0', 'node-1']) await l.run(w, `PATH=$PATH:/usr/local/bin; ctr -n k8s.io images rm ${PAUSE_IMAGE}`);
    // The summary wraps to the terminal: compared with its lines joined.
    const flat = (r: { stdout: string; stderr: string }) => `${r.stdout} ${r.stderr}`.replace(/\s+/g, ' ');
    const verify = await l.hardway(['verify', '--ready-timeout', '0']);
    expect(verify.code).toBe(1);
    for (const w of ['node-0', 'node-1']) {
      expect(flat(verify)).toContain(`the sandbox image ${PAUSE_IMAGE} (sandboxImage in cluster.yaml) is in images/pause.tar but not in containerd on ${w}`);
      expect(flat(verify)).toContain(`run "hardway images --node ${w}"`);
    }
    // A smoke deployment an earlier suite left on the shared cluster is already rolled out, with pods
    // made while the image was there: smoke's pods must be new ones, which need the sandbox image.
    await jumpboxKubectl(l, ['delete', 'deployment', 'hardway-smoke', '--ignore-not-found', '--wait=true', '--timeout=120s']);
    // Its events say why within seconds: waiting smoke's default 180 s for the rollout would add nothing.
    const smoke = await l.hardway(['smoke', '--web-image', WEB_IMAGE, '--rollout-timeout', '60']);
    expect(smoke.code).toBe(1);
    // The summary puts each line of the error under its machine's name (`server: - ...`).
    const said = /deployment hardway-smoke did not roll out \([^)]*\): (?:\S+: )?- hardway-smoke-\S+: FailedCreatePodSandBox: .*/.exec(flat(smoke));
    expect(said, flat(smoke)).not.toBeNull();
    console.log(`smoke without the sandbox image: ${said![0].slice(0, 400)}`);
    await hardway(l, ['images']);
    await hardway(l, ['verify']);
    await jumpboxKubectl(l, ['delete', 'deployment', 'hardway-smoke', '--ignore-not-found']);
  });

  /**
   * Before mirror-missing breaks node: a pod of the registry image runs there (so the image is
   * cached). Returns the check made after the break: the same image with IfNotPresent still starts
   * (the trap), with Always it fails to pull.
   */
  async function mirrorTrap(l: Lab, node: string): Promise<() => Promise<void>> {
    const apply = async (name: string, policy: 'Always' | 'IfNotPresent') => {
      const file = join(tmp, `${name}.json`);
      writeFileSync(file, pod(name, node, CACHED_IMAGE, policy));
      await jumpboxKubectl(l, ['apply', '-f', file]);
    };
    const phase = (name: string) => jumpboxKubectl(l, ['get', 'pod', name, '-o', 'jsonpath={.status.phase} {.status.containerStatuses[0].state.waiting.reason}']);
    await apply('doc-before', 'Always');
    await eventually(async () => expect(await phase('doc-before')).toMatch(/^Running/), 120);
    return async () => {
      await apply('doc-cached', 'IfNotPresent');
      await apply('doc-always', 'Always');
      await eventually(async () => expect(await phase('doc-cached')).toMatch(/^Running/), 120);
      await eventually(async () => expect(await phase('doc-always')).toMatch(/ErrImagePull|ImagePullBackOff/), 120);
      await jumpboxKubectl(l, ['delete', 'pod', 'doc-before', 'doc-cached', 'doc-always', '--wait=false']);
    };
  }

  /** After the fix: a new pod that must pull (Always) runs on node again. */
  async function pullsAgain(l: Lab, node: string, name: string): Promise<void> {
    const file = join(tmp, `${name}.json`);
    writeFileSync(file, pod(name, node, CACHED_IMAGE, 'Always'));
    await jumpboxKubectl(l, ['apply', '-f', file]);
    await eventually(async () => expect(await jumpboxKubectl(l, ['get', 'pod', name, '-o', 'jsonpath={.status.phase}'])).toBe('Running'), 120);
    await jumpboxKubectl(l, ['delete', 'pod', name, '--wait=false']);
  }
});


/**
 * Every secret pki/ holds, found here without hardway's own code: each private key file whole and
 * each line of its body, each kubeconfig's embedded data (certificates and keys) and tokens, the
 * encryption config's keys.
 */
function pkiSecrets(dir: string): string[] {
  const secrets: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) {
        walk(p);
        continue;
      }
      const text = readFileSync(p, 'utf8');
      if (n.endsWith('.key')) secrets.push(text.trim(), ...text.split('\n').filter((x) => x.length >= 16 && !x.startsWith('-----')));
      if (n.endsWith('.kubeconfig')) secrets.push(...[...text.matchAll(/(?:-data|token): *(\S+)/g)].map((m) => m[1]!));
      if (n === 'encryption-config.yaml') secrets.push(...[...text.matchAll(/secret: *(\S+)/g)].map((m) => m[1]!));
    }
  };
  walk(dir);
  return secrets;
}
