// Certificate rotation on a running cluster (issue 15), on the shared 1+2 lab (test/e2e/helpers/shared-lab.ts;
// with HARDWAY_E2E_CERTS_SERVERS=N a lab of its own, wt-certs) with the real Kubernetes v1.20.2
// binaries: `hardway certs --renew kube-api-server node-0/kubelet`, then `hardway distribute`
// restarts exactly the API server(s) and node-0's kubelet (InvocationIDs; what else starts anew
// was restarted by systemd after exiting on its own, NRestarts and its journal say), the control-plane
// machines one at a time (each API server ready again before the next), the API's port serves the
// new serial (openssl s_client), so does node-0's kubelet port, the nodes stay Ready, a second
// distribute changes nothing. A client lists pods against every API server in turn throughout:
// with several servers no round of requests loses more than one server. Then the cluster CA is
// rotated in its three stages (`certs --renew-ca`, each followed by `distribute`).
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useLab, type Lab } from './helpers/lab.ts';
import { useSharedCluster } from './helpers/shared-lab.ts';
import { eventually, failures, invocationIds, jumpboxKubectl, newLog, prepareClusterProject, runJson, statuses } from './helpers/cluster.ts';

/**
 * Control-plane machines of this lab: 1 in `npm test` (CI's budget); HARDWAY_E2E_CERTS_SERVERS=3
 * runs the same tests on 3 servers (etcd and an API server on each), where the pod listing must
 * never lose two servers at once.
 */
const SERVERS = Number(process.env.HARDWAY_E2E_CERTS_SERVERS ?? '1');
if (!Number.isInteger(SERVERS) || SERVERS < 1 || SERVERS > 5) throw new Error(`HARDWAY_E2E_CERTS_SERVERS must be 1 to 5, got ${process.env.HARDWAY_E2E_CERTS_SERVERS}`);
// One server: the shared cluster (its project prepared); several: a lab of their own, prepared here.
const lab = SERVERS === 1 ? useSharedCluster() : useLab({ name: 'wt-certs', subnet: '10.240.152.0/24', servers: SERVERS, workers: 2 });
const CONTROL_PLANE = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;
const WORKER = ['containerd', 'kubelet', 'kube-proxy'] as const;
const READY = ['node-0 True', 'node-1 True'];

/** `hardway ...` in the lab directory; throws with its output unless it exits 0. */
async function hardway(l: Lab, args: string[]): Promise<string> {
  const r = await l.hardway(args);
  if (r.code !== 0) throw new Error(`hardway ${args.join(' ')} failed (exit ${r.code}):\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

/** Runs a program on this host; never throws. */
function local(cmd: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile(cmd, args, { maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
    child.stdin?.end(input ?? '');
  });
}

/** The serial of the certificate a TLS port presents (openssl s_client from this host). */
async function servedSerial(address: string): Promise<string> {
  const hello = await local('openssl', ['s_client', '-connect', address, '-showcerts'], '');
  const pem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/.exec(hello.stdout)?.[0];
  if (!pem) throw new Error(`no certificate from ${address}:\n${hello.stderr}`);
  const x = await local('openssl', ['x509', '-noout', '-serial'], pem);
  return x.stdout.trim();
}

/** The serial of a certificate file of the project (pki/...). */
async function fileSerial(l: Lab, pkiPath: string): Promise<string> {
  return (await local('openssl', ['x509', '-noout', '-serial', '-in', join(l.dir, pkiPath)])).stdout.trim();
}

/** `name Ready-status` of every node. */
async function nodes(l: Lab): Promise<string[]> {
  const out = await jumpboxKubectl(l, ['get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}']);
  return out.trim().split('\n').sort();
}

/** Every service's InvocationID on every machine: `machine/service` -> id. */
async function allInvocations(l: Lab): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const m of l.machines) {
    const ids = await invocationIds(l, m.hostname, m.role === 'control-plane' ? CONTROL_PLANE : WORKER);
    for (const [s, id] of Object.entries(ids)) out[`${m.hostname}/${s}`] = id;
  }
  return out;
}

/** systemd's NRestarts of every service on every machine: restarts by its Restart= policy (a `systemctl restart` does not count). */
async function allAutoRestarts(l: Lab): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const m of l.machines) {
    const services = m.role === 'control-plane' ? CONTROL_PLANE : WORKER;
    const text = await l.run(m.hostname, `for s in ${services.join(' ')}; do echo "$s $(systemctl show -p NRestarts --value $s)"; done`);
    for (const line of text.trim().split('\n')) {
      const [s, n] = line.split(' ') as [string, string];
      out[`${m.hostname}/${s}`] = Number(n);
    }
  }
  return out;
}

/** One request of the pod lister: the server asked, whether it answered, when it was sent (ms). */
interface Request {
  server: string;
  ok: boolean;
  at: number;
}

/**
 * Lists pods against every API server in turn until stopped: one round = one request to each.
 * Returns every request, grouped by round.
 */
function podLister(l: Lab): { stop(): Promise<Request[][]> } {
  const servers = l.machines.filter((m) => m.role === 'control-plane');
  const rounds: Request[][] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const round: Request[] = [];
      for (const s of servers) {
        const at = Date.now();
        const r = await local('kubectl', ['--kubeconfig', join(l.dir, 'pki/jumpbox.kubeconfig'), `--server=https://${s.ip}:6443`,
          '--request-timeout=5s', 'get', 'pods', '-A', '-o', 'name']);
        round.push({ server: s.hostname, ok: r.code === 0, at });
      }
      rounds.push(round);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return rounds;
    },
  };
}

/** Per server: requests failed, and each run of failures from its first failed request to the next answered one. */
function outages(requests: Request[]): string {
  const servers = [...new Set(requests.map((q) => q.server))];
  return servers.map((server) => {
    const mine = requests.filter((q) => q.server === server);
    const runs: string[] = [];
    let since: number | undefined;
    for (const q of mine) {
      if (!q.ok && since === undefined) since = q.at;
      if (q.ok && since !== undefined) {
        runs.push(`${((q.at - since) / 1000).toFixed(1)} s`);
        since = undefined;
      }
    }
    if (since !== undefined) runs.push('until the end');
    return `${server} ${mine.filter((q) => !q.ok).length} of ${mine.length} failed${runs.length ? ` (failing for ${runs.join(', ')})` : ''}`;
  }).join('; ');
}

describe(`certificate rotation on a running ${SERVERS}-server 2-worker cluster (real v1.20.2 binaries)`, () => {
  beforeAll(async () => {
    const l = lab();
    if (SERVERS > 1) await prepareClusterProject(l);
    const up = await runJson(l, ['up', '--ready-timeout', '180']);
    expect(failures(up.json), up.stderr).toEqual({});
    await eventually(async () => expect(await nodes(l)).toEqual(READY), 180);
  });

  it('renew kube-api-server and node-0/kubelet, distribute: only those services restart, the new certificates are served, nodes stay Ready, a rerun changes nothing', async () => {
    const l = lab();
    const server = l.machines.find((m) => m.role === 'control-plane')!;
    const node0 = l.machines.find((m) => m.hostname === 'node-0')!;
    const oldApi = await servedSerial(`${server.ip}:6443`);
    expect(oldApi).toBe(await fileSerial(l, 'pki/kube-api-server.crt'));
    const before = await allInvocations(l);
    const autoBefore = await allAutoRestarts(l);
    const logsBefore = readdirSync(join(l.dir, 'logs'));

    const renew = await hardway(l, ['certs', '--renew', 'kube-api-server', 'node-0/kubelet']);
    expect(renew).toContain('reissued kube-api-server (renewal asked for (--renew))');
    expect(renew).toContain('reissued node-0/kubelet (renewal asked for (--renew))');
    expect(renew).toContain('written pki/machines/node-0/kubelet.kubeconfig');
    const newApi = await fileSerial(l, 'pki/kube-api-server.crt');
    const newKubelet = await fileSerial(l, 'pki/machines/node-0/kubelet.crt');
    expect(newApi).not.toBe(oldApi);

    const lister = podLister(l);
    const run = await runJson(l, ['distribute']);
    const rounds = await lister.stop();
    expect(failures(run.json), run.stderr).toEqual({});
    expect(statuses(run.json).sort()).toEqual([...l.machines.filter((m) => m.role === 'control-plane').map((m) => `changed ${m.hostname} distribute`),
      'changed node-0 distribute', 'unchanged node-1 distribute'].sort());

    const after = await allInvocations(l);
    const autoAfter = await allAutoRestarts(l);
    const restarted = Object.keys(after).filter((k) => after[k] !== before[k]).sort();
    const renewed = [...l.machines.filter((m) => m.role === 'control-plane').map((m) => `${m.hostname}/kube-apiserver`), 'node-0/kubelet'].sort();
    // hardway restarted exactly the readers of the renewed files (its run log has no other restart).
    expect(restarted.filter((k) => autoAfter[k] === autoBefore[k])).toEqual(renewed);
    const log = newLog(l, logsBefore);
    expect([...new Set(log.match(/for s in [^;]+; do if systemctl is-active/g))].sort())
      .toEqual(['for s in kube-apiserver; do if systemctl is-active', 'for s in kubelet; do if systemctl is-active']);
    // Anything else that started anew was restarted by systemd after it exited by itself: the controller
    // manager and the scheduler end when they cannot renew their leader lease while the API server is away.
    for (const k of restarted.filter((x) => !renewed.includes(x))) {
      const [m, service] = k.split('/') as [string, string];
      expect(autoAfter[k], `${k} was restarted by someone other than systemd`).toBeGreaterThan(autoBefore[k]!);
      console.log(`${k}: restarted by systemd (NRestarts ${autoBefore[k]} -> ${autoAfter[k]}); its journal: ${(await l.run(m, `journalctl -u ${service} --no-pager -o cat | grep -E 'leaderelection lost|failed to renew lease' | tail -1`)).trim()}`);
    }

    // The new certificates are what the ports present.
    for (const s of l.machines.filter((m) => m.role === 'control-plane')) expect(await servedSerial(`${s.ip}:6443`)).toBe(newApi);
    expect(await eventually(async () => {
      const served = await servedSerial(`${node0.ip}:10250`);
      if (served !== newKubelet) throw new Error(`node-0:10250 still serves ${served}`);
      return served;
    }, 60)).toBe(newKubelet);

    // Nodes stay Ready; the API answers through the renewed certificate (the jumpbox kubeconfig trusts the same CA).
    expect(await nodes(l)).toEqual(READY);
    console.log(`pod listing during distribute, ${rounds.length} rounds: ${outages(rounds.flat())}`);
    // With several servers, the rolling restart leaves all but one answering at every moment.
    if (SERVERS > 1) expect(rounds.filter((r) => r.filter((q) => !q.ok).length > 1)).toEqual([]);

    // A second distribute: nothing to do, nothing restarted.
    const again = await runJson(l, ['distribute']);
    expect(again.json.changed).toBe(0);
    expect(await allInvocations(l)).toEqual(after);
    expect((await l.hardway(['certs', 'check'])).code).toBe(0);
  });

  it('CA rotation: start, switch, finish, each followed by distribute; switch refused while a machine is behind; nodes Ready, the API reaches the kubelets, the served certificates chain to the new CA alone', async () => {
    const l = lab();
    const server = l.machines.find((m) => m.role === 'control-plane')!;
    const oldCa = await fileSerial(l, 'pki/ca.crt');
    const start = await hardway(l, ['certs', '--renew-ca', '--yes']);
    expect(start).toContain('CA rotation 1/3 (start)');
    // Not distributed yet: every machine is behind pki/, so the switch is refused and changes nothing.
    const refused = await l.hardway(['certs', '--renew-ca', '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`--renew-ca refused: ${l.machines.length} machine(s) do not hold pki/'s current CA files yet`);
    const cycle = async (what: string) => {
      const run = await runJson(l, ['distribute']);
      expect(failures(run.json), `${what}: ${run.stderr}`).toEqual({});
      await eventually(async () => expect(await nodes(l)).toEqual(READY), 120);
      // The API server reaches a kubelet (its serving certificate against --kubelet-certificate-authority).
      expect(await jumpboxKubectl(l, ['get', '--raw', '/api/v1/nodes/node-0/proxy/healthz'])).toBe('ok');
    };
    await cycle('after start');
    expect(await hardway(l, ['certs', '--renew-ca', '--yes'])).toContain('CA rotation 2/3 (switch)');
    await cycle('after switch');
    expect(await hardway(l, ['certs', '--renew-ca', '--yes'])).toContain('CA rotation 3/3 (finish)');
    await cycle('after finish');
    const newCa = await fileSerial(l, 'pki/ca.crt');
    expect(newCa).not.toBe(oldCa);
    // What the API port and node-0's kubelet port serve verifies against the new CA alone.
    for (const address of [`${server.ip}:6443`, `${l.machines.find((m) => m.hostname === 'node-0')!.ip}:10250`]) {
      const verify = await local('openssl', ['s_client', '-connect', address, '-CAfile', join(l.dir, 'pki/ca.crt'), '-verify_return_error'], '');
      expect(verify.stdout, `${address}: ${verify.stderr}`).toContain('Verify return code: 0 (ok)');
    }
    expect((await runJson(l, ['distribute'])).json.changed).toBe(0);
    expect((await l.hardway(['verify'])).code).toBe(0);
    expect((await l.hardway(['certs', 'check'])).code).toBe(0);
  });
});
