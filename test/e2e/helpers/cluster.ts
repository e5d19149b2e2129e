/**
 * End-to-end helper for the cluster suites: turns a lab (helpers/lab.ts) into a project that
 * `hardway up` can run on, and reads machine state the tests compare before and after a run.
 *
 * API
 *   prepareClusterProject(lab)   `hardway download --source debian` (Debian's binaries, and the real
 *                                Kubernetes v1.20.2 server binaries built from Debian's source package:
 *                                minutes on a fresh machine, then cached) and `hardway build-images`
 *                                (the offline pause and web images, and CoreDNS built from
 *                                ../shared/third_party, set as dns.source). Throws on failure.
 *   jumpboxKubectl(lab, args)    kubectl on this host with the jumpbox kubeconfig (pki/jumpbox.kubeconfig),
 *                                to the server's address (the host does not resolve the lab's names).
 *   runJson(lab, args)           runs `hardway ...args --json`; resolves { code, json, stderr }.
 *   failures(summary)            { 'step@machine': error } of the failed results; statuses(summary) one line each.
 *   podNetns(lab, m, ns)         a pod netns made by running the CNI bridge plugin with the installed
 *                                config; returns the address it got (checked inside the netns).
 *   newLog(lab, before)          text of the one run log written since `before` (a logs/ listing).
 *   remoteSha256(lab, m, paths)  Map path -> sha256 on machine m ('missing' when absent).
 *   serviceStates(lab, m, svcs)  Map service -> `systemctl is-active` answer.
 *   invocationIds(lab, m, svcs)  Map service -> systemd InvocationID (changes on every (re)start).
 *   kubeletStarted(lab, m)       waits until a (re)started kubelet has done its start-up writes.
 *   markTime / filesChangedSince files written on a machine after a mark (OS noise left out);
 *   runtimeState(lab, m)         routes, links, sysctl, swap, cluster services, netns: state without files.
 *   eventually(fn, seconds)      retries fn until it stops throwing (after a reboot).
 *   unwrapSudo(command)          a command of the run log or a dry run as run by root: without the
 *                                `sudo -n sh -c '...'` a login user's commands go through.
 *   runPrefix(lab)              what a dry run's `run:` line starts with on the lab (sudo's wrapper or nothing).
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Lab, RunResult } from './lab.ts';
import { useCorednsSource } from '../../../scripts/coredns-source.ts';

/** One result line of a remote command's --json output, and the whole summary: the engine's own types. */
export type { HostResult as StepResult, RunResult as RunSummary } from '../../../src/engine/types.ts';
import type { RunResult as RunSummary } from '../../../src/engine/types.ts';

/** The real binaries (Debian's, and Kubernetes built from Debian's source package) and the offline images. */
export async function prepareClusterProject(lab: Lab): Promise<void> {
  useCorednsSource(lab.dir);
  for (const args of [['download', '--source', 'debian'], ['build-images']]) {
    const r = await lab.hardway(args);
    if (r.code !== 0) throw new Error(`hardway ${args.join(' ')} failed (exit ${r.code}):\n${r.stderr}\n${r.stdout}`);
  }
}

/** kubectl on the host with the jumpbox kubeconfig; throws with its stderr on a non-zero exit. */
export async function jumpboxKubectl(lab: Lab, args: string[]): Promise<string> {
  const server = lab.machines.find((m) => m.role === 'control-plane')!;
  const r = await runLocal('kubectl', ['--kubeconfig', join(lab.dir, 'pki/jumpbox.kubeconfig'), `--server=https://${server.ip}:6443`, '--request-timeout=20s', ...args]);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (exit ${r.code}):\n${r.stderr}`);
  return r.stdout;
}

function runLocal(cmd: string, args: string[]): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(cmd, args, { maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** `hardway ...args --json`; the parsed summary (throws if stdout is not one JSON object). */
export async function runJson(lab: Lab, args: string[]): Promise<{ code: number; json: RunSummary; stderr: string }> {
  const r: RunResult = await lab.hardway([...args, '--json']);
  try {
    return { code: r.code, json: JSON.parse(r.stdout) as RunSummary, stderr: r.stderr };
  } catch {
    throw new Error(`hardway ${args.join(' ')} --json printed no JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
}

/** `status machine step` for every result, to compare whole runs at a glance. */
export function statuses(s: RunSummary): string[] {
  return s.results.map((r) => `${r.status} ${r.machine} ${r.step}`);
}

/** The failures of a run, as `step@machine`, with their messages. */
export function failures(s: RunSummary): Record<string, string> {
  return Object.fromEntries(s.results.filter((r) => r.status === 'failed').map((r) => [`${r.step}@${r.machine}`, r.error ?? '']));
}

/** Creates pod netns `ns` through the rendered CNI bridge config; returns the address the plugin gave. */
export async function podNetns(l: Lab, machine: string, ns: string): Promise<string> {
  const out = await l.run(machine, `ip netns add ${ns} && CNI_COMMAND=ADD CNI_CONTAINERID=${ns} CNI_NETNS=/var/run/netns/${ns} CNI_IFNAME=eth0 CNI_PATH=/opt/cni/bin /opt/cni/bin/bridge < /etc/cni/net.d/10-bridge.conf`);
  const cni = JSON.parse(out) as { ips: { address: string }[] };
  const address = cni.ips[0]!.address;
  const inside = await l.run(machine, `ip netns exec ${ns} ip -4 -o addr show dev eth0`);
  if (!inside.includes(`inet ${address} `)) throw new Error(`${machine}: eth0 in netns ${ns} has not ${address}:\n${inside}`);
  return address.split('/')[0]!;
}

/** The text of the one run log written since `before` was listed. */
export function newLog(l: Lab, before: string[]): string {
  const added = readdirSync(join(l.dir, 'logs')).filter((f) => !before.includes(f));
  if (added.length !== 1) throw new Error(`expected one new run log in ${l.dir}/logs, found: ${added.join(', ') || 'none'}`);
  return readFileSync(join(l.dir, 'logs', added[0]!), 'utf8');
}

/** SHA-256 of each path on a machine, or 'missing'. */
export async function remoteSha256(lab: Lab, machine: string, paths: string[]): Promise<Map<string, string>> {
  const quoted = paths.map((p) => `'${p}'`).join(' ');
  const out = await lab.run(machine, `for f in ${quoted}; do if [ -f "$f" ]; then sha256sum "$f"; else echo "missing $f"; fi; done`);
  return new Map(out.trim().split('\n').map((l) => {
    const [sum, path] = l.split(/\s+/) as [string, string];
    return [path, sum];
  }));
}

/** `systemctl is-active` of each service. */
export async function serviceStates(lab: Lab, machine: string, services: readonly string[]): Promise<Record<string, string>> {
  const out = (await lab.ssh(machine, `for s in ${services.join(' ')}; do echo "$s $(systemctl is-active $s)"; done`)).stdout;
  return Object.fromEntries(out.trim().split('\n').map((l) => l.split(' ') as [string, string]));
}

/** systemd's InvocationID of each service: a new one means the service was (re)started. */
export async function invocationIds(lab: Lab, machine: string, services: readonly string[]): Promise<Record<string, string>> {
  const out = await lab.run(machine, `for s in ${services.join(' ')}; do echo "$s $(systemctl show -p InvocationID --value $s)"; done`);
  return Object.fromEntries(out.trim().split('\n').map((l) => l.split(' ') as [string, string]));
}

/** Every service hardway runs on some machine. */
export const CLUSTER_SERVICES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'containerd', 'kubelet', 'kube-proxy', 'hardway-pod-routes'] as const;

/**
 * Where a run writes on a machine, minus what the OS itself rewrites (journal, timers, apt) and
 * etcd's data dir (the running cluster's own database: leases and node status are written every few
 * seconds whatever hardway does).
 */
const WATCHED = '/etc /usr /opt /srv /root /home /var';
const OS_NOISE = ['/var/log', '/var/cache', '/var/tmp', '/var/lib/systemd', '/var/lib/apt', '/var/lib/logrotate', '/var/backups', '/var/lib/etcd'];

/**
 * Waits until the kubelet on a worker has finished starting: its device manager writes
 * /var/lib/kubelet/device-plugins/ only once the container runtime answers, seconds after the unit
 * is active. A test that marks the time right after a kubelet restart would otherwise see those
 * writes as its own command's (it did in CI, under load).
 */
export async function kubeletStarted(lab: Lab, machine: string, seconds = 120): Promise<void> {
  const check = 'since=$(systemctl show -p ActiveEnterTimestamp --value kubelet); ' +
    'sock=/var/lib/kubelet/device-plugins/kubelet.sock; ' +
    '[ -S $sock ] && [ "$(stat -c %Y $sock)" -ge "$(date -d "$since" +%s)" ] || { echo "kubelet on $(hostname) still starting (active since $since)"; exit 1; }';
  await eventually(() => lab.run(machine, check), seconds);
}

/** Marks the time on a machine; filesChangedSince lists files written after it. */
export async function markTime(lab: Lab, machine: string): Promise<void> {
  await lab.run(machine, 'touch /run/hardway-e2e-mark && sleep 1.1');
}

/** Files and directories under the watched trees modified after markTime (empty = nothing written). */
export async function filesChangedSince(lab: Lab, machine: string): Promise<string[]> {
  const prune = OS_NOISE.map((p) => `-path ${p} -prune`).join(' -o ');
  const out = await lab.run(machine, `find ${WATCHED} -xdev \\( ${prune} \\) -o -newer /run/hardway-e2e-mark -print 2>/dev/null || true`);
  return out.split('\n').filter(Boolean);
}

/** Runtime state a run could change without writing a file: routes, sysctls, units, links. */
export async function runtimeState(lab: Lab, machine: string): Promise<string> {
  return lab.run(machine, [
    'ip -4 route show',
    'ip -o link show | cut -d: -f2',
    'sysctl -n net.ipv4.ip_forward',
    'systemctl is-enabled swap.target || true',
    `for s in ${CLUSTER_SERVICES.join(' ')}; do echo "$s $(systemctl is-active $s) $(systemctl is-enabled $s 2>/dev/null)"; done`,
    'ip netns list',
  ].join('; echo ---; '));
}

/** Retries `fn` (every 500 ms, up to `seconds`) until it does not throw; rethrows the last error. */
export async function eventually<T>(fn: () => Promise<T>, seconds = 30): Promise<T> {
  const until = Date.now() + seconds * 1000;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > until) throw e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** A command as the run log or a dry run shows it, without a login user's `sudo -n sh -c '...'` (the first line of a longer one too). */
export function unwrapSudo(command: string): string {
  const m = /^sudo -n sh -c '(.*?)('?)$/s.exec(command);
  return m ? m[1]!.replace(/'\\''/g, "'") : command;
}

/** What a dry run's `run: ` command starts with on this lab: sudo's wrapper for a login user, else nothing. */
export function runPrefix(lab: Lab): string {
  return lab.loginUser ? "sudo -n sh -c '" : '';
}
