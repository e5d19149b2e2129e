// The faults `hardway lab break` makes on a healthy lab: each one what the write-ups this project
// grew from describe, made for real on one machine. None is undone by `lab break`: the way back is
// the command `hardway doctor` names (each entry says which). The unit and e2e tests iterate this list
// (docs/contributing.md: To add a break scenario).
import { readFileSync } from 'node:fs';
import { commandFor } from '../command-table.ts';
import { labMachineLine } from '../doctor/fixes.ts';
import type { Check } from '../doctor/checks/index.ts';
import type { StepName } from '../steps/index.ts';
import { FailureError } from '../errors.ts';
import { join } from 'node:path';
import type { Inventory, Machine, Role } from '../inventory.ts';
import { HOSTS_MARKERS, PKI, WORKER } from '../layout.ts';
import { PAUSE_IMAGE, WEB_IMAGE } from '../images/names.ts';
import { CRI_NAMESPACE, CTR } from '../probes/containerd.ts';
import { clusterObjects, podsLabelled, type KubeObject, type ObjectsRead } from '../probes/kubectl.ts';
import type { ProbeRequest } from '../probes/probe.ts';
import { registryDir } from '../render/registries.ts';
import { podRoutes } from '../render/routes.ts';
import { POD_FORWARD_CHAIN } from '../net/pod-forwarding.ts';
import { sh, type Command } from '../shell.ts';
import { LAB_REGISTRY_NAME, repositoryOf } from '../lab/registry.ts';
import { expiredKubelet } from './expired-cert.ts';

/** What a scenario may do to its machine (src/break/run.ts provides it). */
export interface BreakEnv {
  inventory: Inventory;
  machine: Machine;
  /** Runs a command on the machine; throws a CommandError naming machine, command and stderr. */
  exec(cmd: Command): Promise<string>;
  /** Changes the cluster: kubectl with these arguments against its API (admin kubeconfig, on the first control plane). */
  kubectl(args: Command): Promise<string>;
  /** Reads the cluster's API through probes of the registry (on the first control plane), typed as each parses; a failed read throws. */
  api(read: ProbeRequest<ObjectsRead>): Promise<KubeObject[]>;
  /** Writes a file on the machine (temp file + rename). */
  upload(path: string, content: string, mode: number): Promise<void>;
  /** Stops the machine (clean shutdown of its systemd-nspawn). */
  stop(): Promise<void>;
  /** Reboots the machine for real (cloud-init runs again) and waits for SSH. */
  reboot(): Promise<void>;
}

/** What the fix of a scenario runs: steps (on the broken machine, or `everywhere` they run), or the lab's start of the machine. */
export type ScenarioFix = { steps: StepName[]; everywhere?: boolean } | { lab: 'start' };

/** The command line of a scenario's fix for the machine it broke, in lab `lab`, from the command table. */
export function scenarioFix(s: Scenario, machine: string, lab: string): string {
  const fix = s.doctor.fix;
  if ('lab' in fix) return labMachineLine(fix.lab, machine, lab);
  return commandFor(fix.steps, fix.everywhere ? {} : { node: machine });
}

/** One fault. */
export interface Scenario {
  name: string;
  /** What it breaks, in one line. */
  breaks: string;
  /** What a learner sees afterwards, before running doctor. */
  sees: string;
  /** The roles of machine it can break. */
  roles: Role[];
  /**
   * The machine of the 1-server 2-worker lab (server, node-0, node-1) the tests break it on: the e2e
   * test (test/e2e/doctor.test.ts, so both workers get some) and doctor's unit test of a whole
   * recording. `lab break` without --node still takes the last worker (src/break/run.ts).
   */
  labMachine: 'server' | 'node-0' | 'node-1';
  /** Needs the lab's registry machine (`lab up --registry`). */
  registry?: boolean;
  /** The check doctor names first, and what its fix runs: the tests hold doctor to both (scenarioFix says the line). */
  doctor: { check: Check; fix: ScenarioFix };
  /** Makes the fault; returns what it did, one line per change. */
  apply(env: BreakEnv): Promise<string[]>;
}

/** What systemd-resolved writes as its stub resolver file (the one /etc/resolv.conf links to on Ubuntu), for dns-loop. */
export const STUB_RESOLV_CONF = '/run/systemd/resolve/stub-resolv.conf';
const STUB_CONTENT = '# This is /run/systemd/resolve/stub-resolv.conf managed by man:systemd-resolved(8).\nnameserver 127.0.0.53\noptions edns0 trust-ad\nsearch .\n';

/** The image mirror-missing puts into the node's cache first: the trap that hides a broken mirror. */
export const CACHED_IMAGE = `${LAB_REGISTRY_NAME}/${repositoryOf(WEB_IMAGE)}`;
const TEMPLATE = '/etc/cloud/templates/hosts.debian.tmpl';
/** The CNI plugin cni-plugin-missing deletes: the one the pod network config names. */
export const CNI_PLUGIN_BROKEN = 'bridge';
const BRIDGE_SYSCTLS = ['net.bridge.bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-ip6tables'];

/** Every scenario, in the order `--list` shows them. */
export const SCENARIOS: Scenario[] = [
  {
    name: 'worker-down',
    breaks: 'stops the machine, as a crashed or powered-off VM',
    sees: 'the node turns NotReady after the controller manager\'s grace period (about 40 s); its pods stay listed until their 300 s toleration ends',
    roles: ['worker'],
    labMachine: 'node-1',
    doctor: { check: 'ssh', fix: { lab: 'start' } },
    async apply(env) {
      await env.stop();
      return [`stopped ${env.machine.hostname}`];
    },
  },
  {
    name: 'hosts-drift',
    breaks: "removes hardway's block from cloud-init's hosts template, then reboots: cloud-init rewrites /etc/hosts without the cluster's names",
    sees: 'the node turns NotReady (a new machine would never register: "0 nodes"); it looks like a network or CNI problem, and is /etc/hosts',
    roles: ['worker', 'control-plane'],
    labMachine: 'node-1',
    doctor: { check: 'names', fix: { steps: ['pin-hosts'] } },
    async apply(env) {
      await env.upload(TEMPLATE, withoutBlock(await env.exec(sh`cat ${TEMPLATE}`)), 0o644);
      await env.reboot();
      return [`removed hardway's block from ${TEMPLATE}`, `rebooted ${env.machine.hostname}: cloud-init regenerated /etc/hosts from the template`];
    },
  },
  {
    name: 'mirror-missing',
    breaks: `pulls ${CACHED_IMAGE} into the node's cache, then deletes the mirror file certs.d/localhost_5001_/hosts.toml`,
    sees: `pods of ${CACHED_IMAGE} still start there (cached, IfNotPresent): only a new image, or imagePullPolicy Always, fails with ErrImagePull on that node`,
    roles: ['worker'],
    labMachine: 'node-1',
    registry: true,
    doctor: { check: 'registry', fix: { steps: ['containerd'] } },
    async apply(env) {
      const file = `${registryDir(LAB_REGISTRY_NAME)}/hosts.toml`;
      await env.exec(sh`PATH=$PATH:${WORKER.bin}; ctr -n k8s.io images pull --hosts-dir ${WORKER.containerdCertsDir} ${CACHED_IMAGE} >/dev/null`);
      await env.exec(sh`rm -f ${file}`);
      return [`pulled ${CACHED_IMAGE} into containerd's k8s.io namespace`, `deleted ${file}`];
    },
  },
  {
    name: 'routes-missing',
    breaks: "deletes the machine's routes to the other workers' pod subnets",
    sees: 'every node stays Ready; pods there cannot reach pods on other nodes, and Services whose endpoints are elsewhere time out',
    roles: ['worker', 'control-plane'],
    labMachine: 'node-1',
    doctor: { check: 'routes', fix: { steps: ['routes'] } },
    async apply(env) {
      const routes = podRoutes(env.inventory, env.machine);
      for (const r of routes) await env.exec(sh`ip route del ${r.subnet} via ${r.via}`);
      return routes.map((r) => `deleted the route to ${r.subnet} via ${r.via} (pods of ${r.worker})`);
    },
  },
  {
    name: 'netfilter-off',
    breaks: 'turns bridged traffic off for iptables (net.bridge.bridge-nf-call-iptables/ip6tables = 0), as an unloaded br_netfilter does',
    sees: 'the node stays Ready and pods run; a Service reached from a pod on the same node as its endpoint answers only by chance',
    roles: ['worker'],
    labMachine: 'node-0',
    doctor: { check: 'netfilter', fix: { steps: ['worker-os'] } },
    async apply(env) {
      await env.exec(sh`sysctl -q -w ${BRIDGE_SYSCTLS.map((k) => `${k}=0`)}`);
      return BRIDGE_SYSCTLS.map((k) => `set ${k}=0`);
    },
  },
  {
    name: 'docker-forward',
    breaks: `leaves the worker as installing Docker and a firewall reload do: FORWARD's policy DROP, Docker's DOCKER-USER chain jumped to first and DOCKER-FORWARD last, and hardway's jump to ${POD_FORWARD_CHAIN} gone`,
    sees: 'every node stays Ready and pods run; pods elsewhere cannot open connections to pods on this node (kube-proxy accepts only replies), and Services whose endpoints are here time out',
    roles: ['worker'],
    labMachine: 'node-0',
    // doctor reads the filter table (its forwarding check), and takes the pod-forwarding step's drift into that finding.
    doctor: { check: 'forwarding', fix: { steps: ['pod-forwarding'] } },
    async apply(env) {
      // As dockerd sets them up (an empty DOCKER-USER for the admin's rules), each made once.
      await env.exec(sh`iptables -w -P FORWARD DROP && { iptables -w -N DOCKER-USER 2>/dev/null; iptables -w -N DOCKER-FORWARD 2>/dev/null; true; }`);
      await env.exec(sh`{ iptables -w -C FORWARD -j DOCKER-USER 2>/dev/null || iptables -w -I FORWARD 1 -j DOCKER-USER; } && { iptables -w -C FORWARD -j DOCKER-FORWARD 2>/dev/null || iptables -w -A FORWARD -j DOCKER-FORWARD; }`);
      await env.exec(sh`while iptables -w -D FORWARD -j ${POD_FORWARD_CHAIN} 2>/dev/null; do :; done`);
      return ['set the policy of FORWARD to DROP', 'made the chains DOCKER-USER (jumped to first) and DOCKER-FORWARD (jumped to last), empty as Docker makes them',
        `deleted FORWARD's jump to ${POD_FORWARD_CHAIN}, as a firewall that reloads its own rules does`];
    },
  },
  {
    name: 'containerd-stopped',
    breaks: 'stops containerd',
    sees: "the kubelet stops with it (its unit requires containerd's) and the node turns NotReady after the grace period; running containers keep running, nothing new starts",
    roles: ['worker'],
    labMachine: 'node-0',
    doctor: { check: 'containerd', fix: { steps: ['containerd', 'kubelet'] } },
    async apply(env) {
      await env.exec(sh`systemctl stop containerd`);
      return ['stopped containerd'];
    },
  },
  {
    name: 'cni-config-missing',
    breaks: `deletes the CNI configs ${WORKER.cniBridgeConf} and ${WORKER.cniLoopbackConf}`,
    sees: 'the node turns NotReady (network plugin not ready: cni config uninitialized); new pods there stay ContainerCreating',
    roles: ['worker'],
    labMachine: 'node-1',
    doctor: { check: 'cni', fix: { steps: ['cni'] } },
    async apply(env) {
      // Both: containerd would take the loopback config alone for the pod network and stay "ready".
      const files = [WORKER.cniBridgeConf, WORKER.cniLoopbackConf];
      await env.exec(sh`rm -f ${files}`);
      return files.map((f) => `deleted ${f}`);
    },
  },
  {
    name: 'sandbox-image-missing',
    breaks: `removes the sandbox (pause) image (cluster.yaml's sandboxImage, ${PAUSE_IMAGE} in a lab) from containerd's k8s.io namespace`,
    sees: 'the node stays Ready and running pods keep running; every new pod there stays ContainerCreating (FailedCreatePodSandBox: failed to get sandbox image)',
    roles: ['worker'],
    labMachine: 'node-0',
    doctor: { check: 'drift', fix: { steps: ['images'] } },
    async apply(env) {
      const image = env.inventory.settings.sandboxImage ?? PAUSE_IMAGE;
      await env.exec(sh`${CTR} -n ${CRI_NAMESPACE} images rm ${image} >/dev/null`);
      return [`removed ${image} from containerd's ${CRI_NAMESPACE} namespace`];
    },
  },
  {
    name: 'cni-plugin-missing',
    breaks: `deletes the CNI plugin ${WORKER.cniBin}/${CNI_PLUGIN_BROKEN}`,
    sees: `the node stays Ready and running pods keep running; every new pod there stays ContainerCreating (failed to find plugin "${CNI_PLUGIN_BROKEN}")`,
    roles: ['worker'],
    labMachine: 'node-1',
    doctor: { check: 'drift', fix: { steps: ['cni'] } },
    async apply(env) {
      await env.exec(sh`rm -f ${`${WORKER.cniBin}/${CNI_PLUGIN_BROKEN}`}`);
      return [`deleted ${WORKER.cniBin}/${CNI_PLUGIN_BROKEN}`];
    },
  },
  {
    name: 'cert-expired',
    breaks: "reissues the kubelet's certificate with the project's real CA, already expired, installs it (kubelet.crt and its kubeconfig) and restarts the kubelet",
    sees: 'the node turns NotReady; the kubelet\'s journal says Unauthorized or "certificate has expired"; logs and exec to pods there fail',
    roles: ['worker'],
    labMachine: 'node-0',
    doctor: { check: 'certificates', fix: { steps: ['distribute'] } },
    async apply(env) {
      const pki = (p: string) => readFileSync(join(env.inventory.dir, p), 'utf8');
      const own = PKI.machine(env.machine.hostname, 'kubelet');
      const { certPem, kubeconfig } = expiredKubelet(env.inventory, env.machine.hostname,
        { caPem: pki(PKI.ca.crt), caKeyPem: pki(PKI.ca.key), keyPem: pki(own.key) }, new Date());
      await env.upload(WORKER.kubeletCrt, certPem, 0o644);
      await env.upload(WORKER.kubeletKubeconfig, kubeconfig, 0o600);
      await env.exec(sh`systemctl restart kubelet`);
      return [`installed an expired certificate as ${WORKER.kubeletCrt} and in ${WORKER.kubeletKubeconfig}`, 'restarted the kubelet'];
    },
  },
  {
    name: 'dns-loop',
    breaks: `points the kubelet's resolvConf at a local stub resolver (${STUB_RESOLV_CONF}: nameserver 127.0.0.53, as systemd-resolved's), then restarts the kubelet and the CoreDNS pods on the node`,
    sees: 'the CoreDNS pod there crash-loops, its log says "Loop (127.0.0.1:... -> :53) detected"; the other replica keeps answering until it meets the same trap',
    roles: ['worker'],
    labMachine: 'node-1',
    // The kubelet on the node and the CoreDNS pods from the control plane: on every machine they target.
    doctor: { check: 'kubelet-dns', fix: { steps: ['kubelet', 'dns'], everywhere: true } },
    async apply(env) {
      await env.upload(STUB_RESOLV_CONF, STUB_CONTENT, 0o644);
      const restarted = Number(await env.exec(sh`sed -i ${`s|^resolvConf: .*|resolvConf: "${STUB_RESOLV_CONF}"|`} ${WORKER.kubeletConfig} && systemctl restart kubelet && date +%s`));
      // The restarted kubelet reports NotReady for a moment (seconds after its start), and the
      // scheduler would place the new pod elsewhere: wait for its first Ready report since.
      const node = env.machine.hostname;
      await readyAgain(env, node, restarted);
      // A pod keeps the resolver file it started with: only CoreDNS pods started now get the stub.
      const pods = async () => ((await env.api(podsLabelled.ask('kube-system', 'k8s-app=kube-dns'))) as PodPlaced[])
        .map((p): [string, string] => [p.metadata?.name ?? '', p.spec?.nodeName ?? '']).filter((p) => p[0]);
      const before = await pods();
      const here = before.filter((p) => p[1] === node).map((p) => p[0]);
      // None on this node: one from elsewhere, whose replacement the scheduler prefers to put where no CoreDNS runs.
      const restart = here.length ? here : before.slice(0, 1).map((p) => p[0]);
      if (restart.length) await env.kubectl(sh`delete pod ${restart} -n kube-system --wait=false`);
      const done = [`wrote ${STUB_RESOLV_CONF} (nameserver 127.0.0.53)`, `set resolvConf: "${STUB_RESOLV_CONF}" in ${WORKER.kubeletConfig} and restarted the kubelet`,
        ...restart.map((p) => `deleted CoreDNS pod ${p}, so that a new one starts with the stub resolver`)];
      const fresh = (await pods()).filter((p) => !before.some((b) => b[0] === p[0]));
      const there = fresh.filter((p) => p[1] === node);
      done.push(there.length ? `new CoreDNS pod ${there[0]![0]} is on ${node}` : `no new CoreDNS pod is on ${node} yet (${fresh.map((p) => `${p[0]} on ${p[1] || 'no node'}`).join(', ') || 'none'}): the loop shows once one starts there`);
      return done;
    },
  },
  {
    name: 'dns-down',
    breaks: 'scales the CoreDNS Deployment to 0 replicas, as a mistaken `kubectl scale` or a deleted add-on does',
    sees: 'every node stays Ready and pods run; nothing in a pod finds a Service by its name (nslookup kubernetes.default times out), while addresses still work',
    roles: ['control-plane'],
    labMachine: 'server',
    doctor: { check: 'dns', fix: { steps: ['dns'] } },
    async apply(env) {
      await env.kubectl(sh`scale deployment coredns -n kube-system --replicas=0`);
      return ['scaled deployment kube-system/coredns to 0 replicas'];
    },
  },
];

/** A pod as far as where it runs goes. */
type PodPlaced = KubeObject & { spec?: { nodeName?: string } };

/** A Node as far as its Ready condition and taints go. */
type NodeState = KubeObject & { status?: { conditions?: { type: string; status: string; lastHeartbeatTime?: string }[] }; spec?: { taints?: { key: string }[] } };

/** Waits (up to 2 minutes) until node's kubelet has said Ready since `since` (seconds since the epoch) and the node carries no not-ready taint. */
async function readyAgain(env: BreakEnv, node: string, since: number): Promise<void> {
  for (let i = 0; i < 60; i++) {
    const [read] = (await env.api(clusterObjects.ask([`nodes/${node}`]))) as NodeState[];
    const ready = read?.status?.conditions?.find((c) => c.type === 'Ready');
    const taints = (read?.spec?.taints ?? []).map((t) => t.key);
    if (ready?.status === 'True' && Date.parse(ready.lastHeartbeatTime ?? '') / 1000 > since && !taints.includes('node.kubernetes.io/not-ready')) return;
    await new Promise((r) => setTimeout(r, 2000));
  }
  throw new FailureError(`${node} did not report Ready within 2 minutes after its kubelet restarted`, `check "journalctl -u kubelet" on ${node}`);
}

/** `text` without hardway's hosts block (begin and end marker lines and everything between). Pure. */
export function withoutBlock(text: string): string {
  const out: string[] = [];
  let inside = false;
  for (const line of text.split('\n')) {
    if (line.trimEnd() === HOSTS_MARKERS.begin) inside = true;
    else if (line.trimEnd() === HOSTS_MARKERS.end) inside = false;
    else if (!inside) out.push(line);
  }
  return out.join('\n');
}

/** The scenario of that name. */
export function findScenario(name: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}
