// What `lab up` writes into the lab directory so that `cd DIR && hardway ...` and
// `ssh -F DIR/ssh_config node-0` work with no flags: machines.txt, cluster.yaml, keys, known_hosts,
// ssh_config. Content functions are pure; writeLabFiles puts them on disk.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { InputError } from '../errors.ts';
import { askedForEvenControlPlanes, configPath, ensureKeyPair, PROJECT_FILES, sshHostBlock, writeProjectFiles } from '../project-ssh.ts';
import { PAUSE_IMAGE } from '../images/names.ts';
import { LAB_REGISTRY_MIRROR, LAB_REGISTRY_NAME } from './registry.ts';
import type { LabMachine, LabPlan } from './types.ts';

/** File names inside the lab directory (the same for every provider of machines). */
export const LAB_FILES = PROJECT_FILES;

/** machines.txt in the Kubernetes the Hard Way format: IP FQDN HOSTNAME [POD_SUBNET]. */
export function machinesTxt(plan: LabPlan): string {
  // The registry machine is lab infrastructure, not a machine of the cluster.
  const lines = plan.machines.filter((m) => m.role !== 'registry').map((m) => [m.ip, m.fqdn, m.hostname, m.podSubnet].filter(Boolean).join(' '));
  return `# Lab "${plan.spec.name}" (hardway lab up): IP FQDN HOSTNAME [POD_SUBNET]\n${lines.join('\n')}\n`;
}

/**
 * cluster.yaml with the lab's SSH settings and what a cluster needs on container machines; other
 * keys of an existing file are kept. The cluster settings are ordinary keys a user of real
 * machines may set too: the product's steps have no "if lab" branch.
 */
export function clusterYaml(existing: string | undefined, lab: string, opts: { registry?: boolean; servers?: number; loginUser?: string } = {}): string {
  const doc = parseDocument(existing ?? `# cluster.yaml: settings for every machine of lab "${lab}" (see hardway inventory)\n`);
  askedForEvenControlPlanes(doc, opts.servers ?? 1);
  // A login user is raised with sudo -n (ssh.become's default for a user other than root).
  doc.setIn(['ssh', 'user'], opts.loginUser ?? 'root');
  doc.setIn(['ssh', 'identityFile'], LAB_FILES.key);
  doc.setIn(['ssh', 'knownHosts'], LAB_FILES.knownHosts);
  // No process on this host may lower its oom_score_adj (no CAP_SYS_RESOURCE, not even root), and
  // runc fails a pod sandbox that asks for -998: "can't get final child's PID from pipe: EOF".
  if (!doc.hasIn(['containerd', 'restrictOomScoreAdj'])) doc.setIn(['containerd', 'restrictOomScoreAdj'], true);
  // nf_conntrack_max is host-wide and read-only in a machine: kube-proxy exits on "open
  // /proc/sys/net/netfilter/nf_conntrack_max: permission denied" unless it leaves it alone.
  if (!doc.hasIn(['kubeProxy', 'conntrackMaxPerCore'])) doc.setIn(['kubeProxy', 'conntrackMaxPerCore'], 0);
  // Nothing in the lab reaches a registry: pods start from the pause image `hardway images` loads.
  if (!doc.hasIn(['sandboxImage'])) doc.set('sandboxImage', PAUSE_IMAGE);
  // With the lab registry: images named localhost:5001/... are pulled from the registry machine, as
  // the write-up maps a kind registry (certs.d/localhost_5001_/hosts.toml on every worker).
  if (opts.registry && !doc.hasIn(['registries', LAB_REGISTRY_NAME])) {
    doc.setIn(['registries', LAB_REGISTRY_NAME], doc.createNode({ mirrors: [{ url: LAB_REGISTRY_MIRROR, plainHttp: true }] }));
  }
  return doc.toString();
}

/** known_hosts pinning each machine's host key under its IP, hostname and FQDN. */
export function knownHosts(machines: LabMachine[], hostKeys: Record<string, string>): string {
  return machines
    .map((m) => {
      const [type, key] = hostKeys[m.hostname]!.split(/\s+/);
      return `${m.ip},${m.hostname},${m.fqdn} ${type} ${key}`;
    })
    .join('\n') + '\n';
}

/** ssh_config for `ssh -F DIR/ssh_config node-0`: strict host keys against the lab's known_hosts. */
export function sshConfig(plan: LabPlan, dir: string): string {
  const blocks = plan.machines.map((m) => sshHostBlock([m.hostname, m.fqdn], m.ip, dir, plan.spec.loginUser));
  return `# Lab "${plan.spec.name}" (hardway lab up). Use: ssh -F ${configPath(join(dir, LAB_FILES.sshConfig))} node-0\n\n${blocks.join('\n\n')}\n`;
}

/** Refuses a DIR whose machines.txt or ssh_config hardway lab did not write (e.g. a real cluster's project). */
export function checkDirIsLabs(dir: string): void {
  for (const name of [LAB_FILES.machines, LAB_FILES.sshConfig]) {
    const file = join(dir, name);
    if (existsSync(file) && !readFileSync(file, 'utf8').startsWith('# Lab "')) {
      throw new InputError(`${file} exists and was not written by hardway lab; the lab would overwrite it`,
        'choose another directory with --dir, or move that file away');
    }
  }
}

/** Makes the lab's key pair in DIR unless one is there; returns the public key. */
export function ensureLabKey(dir: string, lab: string): Promise<string> {
  return ensureKeyPair(dir, `hardway-lab-${lab}`);
}

/** Writes machines.txt, cluster.yaml, known_hosts and ssh_config into DIR. */
export function writeLabFiles(plan: LabPlan, dir: string, hostKeys: Record<string, string>): void {
  const clusterFile = join(dir, LAB_FILES.cluster);
  const existing = existsSync(clusterFile) ? readFileSync(clusterFile, 'utf8') : undefined;
  const opts = {
    registry: plan.machines.some((m) => m.role === 'registry'), servers: plan.machines.filter((m) => m.role === 'control-plane').length,
    ...(plan.spec.loginUser !== undefined ? { loginUser: plan.spec.loginUser } : {}),
  };
  writeProjectFiles(dir, {
    [LAB_FILES.machines]: machinesTxt(plan),
    [LAB_FILES.cluster]: clusterYaml(existing, plan.spec.name, opts),
    [LAB_FILES.knownHosts]: knownHosts(plan.machines, hostKeys),
    [LAB_FILES.sshConfig]: sshConfig(plan, dir),
  });
}
