// Several control-plane machines (issue 15) on a 3-server 2-worker lab with the real Kubernetes
// v1.20.2 binaries: `hardway up` converges (one etcd cluster of three over TLS, an API server on
// each, every worker behind its node-local haproxy) and a second `up` changes nothing; with one
// server stopped (`hardway lab stop`) the nodes stay Ready, kubectl with the jumpbox kubeconfig
// still answers and a new pod is scheduled and runs; started again, etcd has three healthy members;
// the etcd CA rotated in its three stages (`certs --renew-ca etcd-ca`, each followed by `distribute`)
// while the API is asked every second on each server: every round some server answers, none loses
// two at once, etcd has three healthy members after each stage, and a second `up` changes nothing;
// `reset --node node-1` leaves Debian's haproxy.cfg as packaged and haproxy running on it.
//
// The jumpbox here is this shared host, whose /etc/hosts other labs use too: its kubectl runs in a
// private mount namespace whose /etc is an overlay, in which `hardway pin-hosts --local` pins the
// cluster's names (api.kubernetes.local on every server) exactly as on a real jumpbox.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEB_IMAGE } from '../../src/images/names.ts';
import { eventually, failures, prepareClusterProject, runJson, serviceStates, type RunSummary } from './helpers/cluster.ts';
import { HARDWAY, useLab, type Lab, type RunResult } from './helpers/lab.ts';

const lab = useLab({ name: 'wt-ha', subnet: '10.240.153.0/24', servers: 3, workers: 2 });
const UP = ['up', '--keep-going', '--ready-timeout', '240'];
const SERVERS = ['server-0', 'server-1', 'server-2'];
const READY = ['node-0 True', 'node-1 True'];

/** Expects a run in which nothing failed or was skipped. */
function expectNoFailures(s: RunSummary): void {
  expect(failures(s), JSON.stringify(failures(s), null, 1)).toEqual({});
  expect(s.results.filter((r) => r.status === 'skipped')).toEqual([]);
}

let overlay = '';

/**
 * Runs a program as on the jumpbox: in a private mount namespace whose /etc is an overlay over this
 * host's (kept across calls in `overlay`), so pin-hosts --local writes there and nowhere else.
 */
function onJumpbox(l: Lab, program: string[]): Promise<RunResult> {
  const [upper, work] = [join(overlay, 'upper'), join(overlay, 'work')];
  const script = 'mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1,workdir=$2" /etc && shift 2 && exec "$@"';
  return new Promise((done) => {
    execFile('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script, 'sh', upper, work, ...program],
      { cwd: l.dir, env: { ...process.env, CI: 'true' }, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
      });
  });
}

/** kubectl on the jumpbox with pki/jumpbox.kubeconfig as it is (no --server): throws with its stderr. */
async function kubectl(l: Lab, args: string[]): Promise<string> {
  const r = await onJumpbox(l, ['kubectl', '--kubeconfig', join(l.dir, 'pki/jumpbox.kubeconfig'), '--request-timeout=30s', ...args]);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed on the jumpbox (exit ${r.code}):\n${r.stderr}`);
  return r.stdout;
}

/** `name Ready-status` of every node, asked from the jumpbox. */
async function nodes(l: Lab): Promise<string[]> {
  const out = await kubectl(l, ['get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}']);
  return out.trim().split('\n').sort();
}

/** `etcdctl endpoint health --cluster` over TLS on a server: one line per member. */
async function etcdHealth(l: Lab, server: string): Promise<string[]> {
  const r = await l.ssh(server, 'ETCDCTL_API=3 etcdctl --endpoints=https://127.0.0.1:2379 --cacert=/etc/etcd/ca.crt '
    + '--cert=/var/lib/kubernetes/etcd-client.crt --key=/var/lib/kubernetes/etcd-client.key --command-timeout=5s endpoint health --cluster 2>&1');
  return r.stdout.trim().split('\n').sort();
}

const ip = (l: Lab, host: string) => l.machines.find((m) => m.hostname === host)!.ip;

/** One round of the API poller: when it started, the servers that did not answer and what kubectl said for each. */
interface Round {
  at: number;
  failed: string[];
  why: string[];
}

/** Asks every API server directly from this host, all at once, every second, until stopped (a GET that reads etcd). */
function apiPoller(l: Lab): { stop(): Promise<Round[]>; retried(): number } {
  const rounds: Round[] = [];
  let running = true;
  let retried = 0;
  // undefined: answered; else the first line kubectl printed (a timeout, a refused connection, a 5xx).
  const once = (server: string) => new Promise<string | undefined>((done) => {
    execFile('kubectl', ['--kubeconfig', join(l.dir, 'pki/jumpbox.kubeconfig'), `--server=https://${ip(l, server)}:6443`, '--request-timeout=3s', 'get', '--raw', '/api/v1/namespaces/default'],
      (err, _out, stderr) => done(err ? `${server}: ${String(stderr).trim().split('\n')[0] ?? err.message}` : undefined));
  });
  // Why a second try: when the etcd leader's machine takes its turn, etcd hands leadership over, and
  // a read in flight at that moment fails on every API server alike ("etcdserver: leader changed",
  // seen at 02:02:10Z on 2026-12-07); the election takes well under a second and a client asks
  // again. A server that is away fails its second try too.
  const ask = async (server: string) => {
    const first = await once(server);
    if (!first?.includes('etcdserver: leader changed')) return first;
    retried++;
    await new Promise((r) => setTimeout(r, 500));
    return once(server);
  };
  const loop = (async () => {
    while (running) {
      const at = Date.now();
      const answers = await Promise.all(SERVERS.map(ask));
      rounds.push({ at, failed: SERVERS.filter((_, i) => answers[i] !== undefined), why: answers.filter((a): a is string => a !== undefined) });
      await new Promise((r) => setTimeout(r, Math.max(0, at + 1000 - Date.now())));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return rounds;
    },
    retried: () => retried,
  };
}
const healthyMembers = (l: Lab) => SERVERS.map((s) => ip(l, s)).sort().map((a) => `https://${a}:2379 is healthy`);

describe('three control-plane machines and two workers with the real Kubernetes v1.20.2 binaries', () => {
  beforeAll(async () => {
    await prepareClusterProject(lab());
    overlay = mkdtempSync(join(tmpdir(), 'hardway-wt-ha-jumpbox-'));
    mkdirSync(join(overlay, 'upper'));
    mkdirSync(join(overlay, 'work'));
  });
  afterAll(() => {
    if (overlay) rmSync(overlay, { recursive: true, force: true });
  });

  it('up converges: one etcd cluster of three over TLS, an API server on each, every worker behind its haproxy; a second up changes nothing', async () => {
    const l = lab();
    const first = await runJson(l, UP);
    expectNoFailures(first.json);
    expect(first.code, first.stderr).toBe(0);
    expect(first.json.results.filter((r) => r.step === 'api-proxy').map((r) => `${r.machine} ${r.status}`)).toEqual(['node-0 changed', 'node-1 changed']);

    const again = await runJson(l, UP);
    expectNoFailures(again.json);
    expect(again.json.changed, JSON.stringify(again.json.results.filter((r) => r.changes > 0))).toBe(0);

    // Every member, asked from each server over TLS with the client certificate.
    for (const s of SERVERS) {
      const health = await etcdHealth(l, s);
      expect(health.map((h) => h.replace(/: .*$/, ''))).toEqual(healthyMembers(l));
      expect(await serviceStates(l, s, ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']))
        .toEqual({ etcd: 'active', 'kube-apiserver': 'active', 'kube-controller-manager': 'active', 'kube-scheduler': 'active' });
    }
    // The workers dial their own haproxy, which has every API server up.
    for (const w of ['node-0', 'node-1']) {
      expect(await l.run(w, "grep -h 'server:' /var/lib/kubelet/kubeconfig /var/lib/kube-proxy/kubeconfig")).toMatch(/^\s+server: https:\/\/127\.0\.0\.1:6443\n\s+server: https:\/\/127\.0\.0\.1:6443\n$/);
      expect(await serviceStates(l, w, ['haproxy'])).toEqual({ haproxy: 'active' });
      expect(await l.run(w, 'ss -Hltn sport = :6443')).toMatch(/127\.0\.0\.1:6443/);
      // haproxy runs hardway's own config through the drop-in; Debian's haproxy.cfg is as the package left it.
      expect(await l.run(w, 'systemctl show -p ExecStart --value haproxy')).toContain('-f /etc/haproxy/hardway-api-proxy.cfg');
      expect(await l.run(w, 'dpkg --verify haproxy; echo "exit $?"')).toBe('exit 0\n');
    }
    // The controller manager and the scheduler elect one leader among the three.
    const leases = await l.run('server-0', 'kubectl --kubeconfig=/var/lib/kubernetes/admin.kubeconfig -n kube-system get lease kube-controller-manager kube-scheduler -o jsonpath=\'{range .items[*]}{.spec.holderIdentity}{"\\n"}{end}\'');
    expect(leases.trim().split('\n')).toHaveLength(2);
    for (const holder of leases.trim().split('\n')) expect(SERVERS.some((s) => holder.startsWith(`${s}_`)), holder).toBe(true);

    // The jumpbox: its names pinned by pin-hosts --local, then kubectl with the kubeconfig as written.
    const pinned = await onJumpbox(l, [process.execPath, HARDWAY, 'pin-hosts', '--local', '--node', 'server-0', '--json']);
    expect(pinned.code, pinned.stderr).toBe(0);
    expect((await onJumpbox(l, ['getent', 'ahostsv4', 'api.kubernetes.local'])).stdout).toContain(ip(l, 'server-2'));
    expect(await kubectl(l, ['config', 'view', '-o', 'jsonpath={.clusters[0].cluster.server}'])).toBe('https://api.kubernetes.local:6443');
    expect(await eventually(async () => {
      const n = await nodes(l);
      if (n.join() !== READY.join()) throw new Error(`nodes: ${n.join(', ')}`);
      return n;
    }, 120)).toEqual(READY);
  });

  it('with server-0 stopped: the nodes stay Ready, kubectl from the jumpbox kubeconfig answers, a new pod is scheduled and runs', async () => {
    const l = lab();
    // server-0 is first everywhere: in the hosts block, in every haproxy and --etcd-servers list.
    const stop = await l.hardway(['lab', 'stop', 'server-0', '--name', 'wt-ha']);
    expect(stop.code, stop.stderr).toBe(0);
    // Past the controller manager's 40 s grace period, every look finds both nodes Ready.
    for (let i = 0; i < 12; i++) {
      expect(await nodes(l)).toEqual(READY);
      await new Promise((r) => setTimeout(r, 5000));
    }
    const pod = JSON.stringify({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'after-stop' },
      spec: { containers: [{ name: 'web', image: WEB_IMAGE, imagePullPolicy: 'Never' }] },
    });
    const created = await onJumpbox(l, ['sh', '-c', 'printf %s "$1" | kubectl --kubeconfig "$2" --request-timeout=30s apply -f -', 'sh', pod, join(l.dir, 'pki/jumpbox.kubeconfig')]);
    expect(created.code, created.stderr).toBe(0);
    const running = await eventually(async () => {
      const out = await kubectl(l, ['get', 'pod', 'after-stop', '-o', 'jsonpath={.spec.nodeName} {.status.phase}']);
      if (!/^node-[01] Running$/.test(out)) throw new Error(`pod after-stop: ${out}`);
      return out;
    }, 180);
    expect(running).toMatch(/^node-[01] Running$/);
  });

  it('server-0 started again: etcd has three healthy members over TLS, and verify passes', async () => {
    const l = lab();
    const start = await l.hardway(['lab', 'start', 'server-0', '--name', 'wt-ha']);
    expect(start.code, start.stderr).toBe(0);
    const health = await eventually(async () => {
      const h = (await etcdHealth(l, 'server-1')).map((x) => x.replace(/: .*$/, ''));
      if (h.join() !== healthyMembers(l).join()) throw new Error(`etcd: ${h.join('; ')}`);
      return h;
    }, 180);
    expect(health).toEqual(healthyMembers(l));
    const verify = await eventually(async () => {
      const r = await runJson(l, ['verify']);
      if (r.code !== 0) throw new Error(JSON.stringify(failures(r.json)));
      return r.json;
    }, 120);
    expectNoFailures(verify);
  });

  it('certs --renew-ca etcd-ca, 3 stages each followed by distribute: the API answers every second throughout, no two servers away at once, etcd 3/3 healthy after each stage; a second up changes nothing', async () => {
    const l = lab();
    const oldCa = (await l.run('server-0', 'openssl x509 -noout -fingerprint -sha256 -in /etc/etcd/ca.crt')).trim();
    const poller = apiPoller(l);
    const marks: string[] = [];
    // The stages' own failure, if any, is the one reported (the poller's verdict would hide it in a finally).
    const stages = (async () => {
      for (const stage of ['1/3 (start)', '2/3 (switch)', '3/3 (finish)']) {
        marks.push(`${new Date().toISOString()} ${stage} begins`);
        const renew = await l.hardway(['certs', '--renew-ca', 'etcd-ca', '--yes']);
        expect(renew.code, `${stage}: ${renew.stderr}`).toBe(0);
        expect(renew.stdout).toContain(`etcd CA rotation ${stage}`);
        const run = await runJson(l, ['distribute']);
        expectNoFailures(run.json);
        for (const s of SERVERS) expect((await etcdHealth(l, s)).map((h) => h.replace(/: .*$/, '')), `${stage}, asked on ${s}`).toEqual(healthyMembers(l));
      }
    })().then(() => undefined, (e: unknown) => e);
    const failed = await stages;
    const rounds = await poller.stop();
    if (failed) throw failed;
    const away = (r: Round) => `${new Date(r.at).toISOString()} ${r.why.join('; ')}`;
    console.log(`etcd CA rotation: ${rounds.length} rounds of the API poller, ${rounds.filter((r) => r.failed.length > 0).length} with a server away, ${poller.retried()} read(s) asked again after an etcd leader change; ${marks.join(', ')}`);
    expect(rounds.length).toBeGreaterThan(10);
    expect(rounds.filter((r) => r.failed.length === SERVERS.length).map(away)).toEqual([]);
    expect(rounds.filter((r) => r.failed.length > 1).map(away)).toEqual([]);
    // Every member serves a certificate of the new CA alone, and trusts it alone.
    const newCa = (await l.run('server-0', 'openssl x509 -noout -fingerprint -sha256 -in /etc/etcd/ca.crt')).trim();
    expect(newCa).not.toBe(oldCa);
    for (const s of SERVERS) {
      expect(await l.run(s, 'grep -c BEGIN /etc/etcd/ca.crt')).toBe('1\n');
      // s_client says its verdict once per session it saw: under TLS 1.3 the tickets the server sends
      // after the handshake may each bring one more, as many as arrive before it exits. Every one must be 0 (ok).
      const verdicts = await l.run(s, `openssl s_client -connect ${ip(l, s)}:2379 -CAfile /etc/etcd/ca.crt -cert /var/lib/kubernetes/etcd-client.crt -key /var/lib/kubernetes/etcd-client.key </dev/null 2>/dev/null | grep 'Verify return code:' || true`);
      expect([...new Set(verdicts.trim().split('\n').map((v) => v.trim()))], s).toEqual(['Verify return code: 0 (ok)']);
    }
    const again = await runJson(l, UP);
    expectNoFailures(again.json);
    expect(again.json.changed, JSON.stringify(again.json.results.filter((r) => r.changes > 0))).toBe(0);
    expect((await l.hardway(['certs', 'check'])).code).toBe(0);
    // Why: 3 stages, each a rolling restart of etcd and the API server on 3 machines, then a full up:
    // about 5 min on a quiet 2-core machine; the e2e default of 10 min left no room on a busy one.
  }, 1_200_000);

  it("reset --node node-1: hardway's haproxy config and drop-in go, Debian's haproxy.cfg stays as packaged and haproxy runs on it; a second reset changes nothing", async () => {
    const l = lab();
    const r = await runJson(l, ['reset', '--yes', '--node', 'node-1']);
    expect(r.code, JSON.stringify(failures(r.json))).toBe(0);
    expect(await l.run('node-1', 'ls /etc/haproxy/hardway-api-proxy.cfg /etc/systemd/system/haproxy.service.d 2>/dev/null; echo "exit $?"')).toBe('exit 2\n');
    expect(await l.run('node-1', 'dpkg --verify haproxy; echo "exit $?"')).toBe('exit 0\n');
    expect(await l.run('node-1', 'systemctl show -p ExecStart --value haproxy')).toContain('-f $CONFIG');
    expect(await serviceStates(l, 'node-1', ['haproxy'])).toEqual({ haproxy: 'active' });
    expect(await l.run('node-1', 'ss -Hltn sport = :6443')).toBe('');
    expect((await runJson(l, ['reset', '--yes', '--node', 'node-1'])).json.changed).toBe(0);
  });
});
