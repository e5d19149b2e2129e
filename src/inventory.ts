// machines.txt (KTHW format: `IPV4 FQDN HOSTNAME [POD_SUBNET]`) plus cluster.yaml -> a validated
// Inventory. Every value that differs per machine or per cluster comes from here.
import { dirname, join, resolve } from 'node:path';
import { InputError, quote } from './errors.ts';
import { closest, didYouMean } from './suggest.ts';
import { displayPath, readInputFile } from './input-file.ts';
import { defaultClusterDnsIp, loadClusterSettings, type ClusterSettings } from './cluster-settings.ts';
import { apiServiceNames, clusterDomainClash, sharedApiName } from './api-names.ts';
import { contains, nthAddress, overlaps, parseCidr, parseIPv4, within, type Network } from './net/ipv4.ts';

/** A machine's role: a line without a pod subnet is a control-plane machine, with one a worker. */
export type Role = 'control-plane' | 'worker';

/** One line of machines.txt, validated. */
export interface Machine {
  ip: string;
  fqdn: string;
  hostname: string;
  podSubnet?: string;
  role: Role;
  line: number;
}

/** The whole cluster: machines, settings and the values derived from them. */
export interface Inventory {
  dir: string;
  machinesFile: string;
  clusterFile: string;
  machines: Machine[];
  controlPlanes: Machine[];
  workers: Machine[];
  settings: ClusterSettings;
  /** First address of the service CIDR: the `kubernetes` Service IP. */
  serviceIp: string;
  /** The kube-dns Service address (dns.clusterIP, else the 10th address of the service CIDR): the kubelets' clusterDNS. */
  clusterDnsIp: string;
  /** FQDN of the first control-plane machine: the name kubelets and kube-proxy use for the API. */
  apiServerName: string;
  /** https://<apiServerName>:<apiPort> */
  apiServerUrl: string;
  /**
   * Machines leaving the cluster in this run (`hardway remove-node`), no longer among `machines`:
   * drain-node takes them out of the API and reset clears them, while every other step works as if
   * they were gone.
   */
  leaving?: Machine[];
}

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
/** A hostname hardway accepts: one lower-case DNS label. */
export const HOSTNAME = LABEL;

/**
 * Addresses that cannot be a machine's: routing to them never reaches another machine (the last
 * match wins, so 255.255.255.255 is named for what it is).
 */
const SPECIAL_ADDRESSES: Array<[string, string]> = [
  ['0.0.0.0/8', '"this network" (0.0.0.0 means any address of the machine itself)'],
  ['127.0.0.0/8', 'a loopback address (every machine is its own 127.x.x.x)'],
  ['169.254.0.0/16', 'a link-local address (not routed between networks)'],
  ['224.0.0.0/4', 'a multicast address'],
  ['240.0.0.0/4', 'a reserved address'],
  ['255.255.255.255/32', 'the broadcast address'],
];

/** The pod subnet a worker needs at least: the kubelet runs up to 110 pods (its default maxPods). */
export const SMALLEST_POD_PREFIX = 25;

/**
 * Names that every machine's /etc/hosts already gives to the machine itself or to special
 * addresses (Debian's and cloud-init's defaults). pin-hosts writes each machine's names into every
 * machine's /etc/hosts, so a machine called `localhost` would make localhost mean that machine
 * everywhere. A domain ending in .localhost is loopback by definition (RFC 6761).
 */
const RESERVED_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback', 'ip6-localnet',
  'ip6-mcastprefix', 'ip6-allnodes', 'ip6-allrouters', 'ip6-allhosts', 'broadcasthost']);

/** Loads machines.txt and the cluster.yaml beside it; throws InputError with file:line on any problem. */
export function loadInventory(machinesFile: string): Inventory {
  const file = resolve(machinesFile);
  const hint = 'run hardway in the directory that holds machines.txt, or pass --machines FILE (your project\'s machines.txt)';
  const text = readInputFile(file, displayPath(file), hint);
  if (text === undefined) throw new InputError(`${machinesFile} not found`, hint);
  const dir = dirname(file);
  const clusterFile = join(dir, 'cluster.yaml');
  const settings = loadClusterSettings(clusterFile, displayPath(clusterFile));
  return parseInventory(text, settings, { file, dir, clusterFile });
}

/** Parses machines.txt text against already-loaded settings. Pure; used by loadInventory and tests. */
export function parseInventory(
  text: string,
  settings: ClusterSettings,
  paths: { file: string; dir: string; clusterFile: string },
): Inventory {
  const shown = displayPath(paths.file);
  const fail = (line: number, msg: string, hint?: string): never => {
    throw new InputError(msg, hint, { file: shown, line });
  };
  const clusterNet = (parseCidr(settings.clusterCidr) as { ok: true; net: Network }).net;
  const serviceNet = (parseCidr(settings.serviceCidr) as { ok: true; net: Network }).net;
  if (overlaps(clusterNet, serviceNet)) {
    throw new InputError(
      `serviceCidr ${settings.serviceCidr} overlaps clusterCidr ${settings.clusterCidr}`,
      'choose a service CIDR outside the pod network',
      { file: displayPath(paths.clusterFile) },
    );
  }

  const machines: Machine[] = [];
  const nets: { net: Network; m: Machine }[] = [];
  const seen = { ip: new Map<string, number>(), fqdn: new Map<string, number>(), hostname: new Map<string, number>() };

  // Any line ending: LF, CRLF, or a lone CR (classic Mac OS, some editors' exports).
  text.split(/\r\n|\r|\n/).forEach((raw, i) => {
    const line = i + 1;
    const content = raw.replace(/#.*$/, '').trim();
    if (content === '') return;
    const fields = content.split(/[ \t]+/);
    if (fields.length < 3 || fields.length > 4) {
      fail(line, `expected "IP FQDN HOSTNAME [POD_SUBNET]", found ${fields.length} field(s)`,
        'one machine per line, e.g. "10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24"');
    }
    const unsafe = fields.find((f) => !/^[A-Za-z0-9./-]+$/.test(f));
    if (unsafe !== undefined) {
      fail(line, `${quote(unsafe)} contains characters that are not allowed (only letters, digits, ".", "-", "/")`,
        'names and addresses may not contain shell characters, quotes or spaces');
    }
    const [ip, fqdn, hostname, subnet] = fields as [string, string, string, string | undefined];
    const ipNum = parseIPv4(ip);
    if (ipNum === undefined) fail(line, `${quote(ip)} is not a valid IPv4 address`, 'write it as four numbers 0-255, e.g. 10.240.0.20');
    const special = SPECIAL_ADDRESSES.filter(([cidr]) => contains((parseCidr(cidr) as { ok: true; net: Network }).net, ipNum!)).pop();
    if (special) {
      fail(line, `${ip} is ${special[1]}, not an address another machine can reach`,
        'write the address the machine has on the network the other machines and the jumpbox reach it by, e.g. 10.240.0.20');
    }
    const labels = fqdn.split('.');
    if (fqdn.length > 253 || labels.length < 2 || !labels.every((l) => LABEL.test(l))) {
      fail(line, `${quote(fqdn)} is not a valid fully qualified domain name`,
        'lower-case labels of letters, digits and "-", separated by dots, e.g. node-0.kubernetes.local');
    }
    if (!LABEL.test(hostname)) {
      fail(line, `${quote(hostname)} is not a valid hostname`, 'a lower-case label of letters, digits and "-", e.g. node-0');
    }
    for (const name of [hostname, fqdn]) {
      if (RESERVED_NAMES.has(name) || name.endsWith('.localhost')) {
        fail(line, `${quote(name)} is a reserved name: /etc/hosts gives it to the machine itself or a special address`,
          `pin-hosts would make it mean ${ip} on every machine; give this machine its own name, e.g. node-0.kubernetes.local node-0`);
      }
    }
    if (subnet !== undefined) {
      const taken = [hostname, fqdn].find((n) => apiServiceNames(settings.clusterDomain).includes(n));
      if (taken) {
        fail(line, `${quote(taken)} is a name of the kubernetes Service, which means the API server, and this line is a worker`,
          `pin-hosts would make it mean the worker ${ip} on every machine: give the worker its own name, e.g. node-0.kubernetes.local node-0`);
      }
    }
    for (const name of [hostname, fqdn]) {
      const clash = clusterDomainClash(name, settings.clusterDomain);
      if (clash !== undefined) {
        fail(line, `${quote(name)} ${clash}`,
          `its certificates would carry that name and pin-hosts would make it mean ${ip} on every machine; give this machine a name outside ${settings.clusterDomain}, e.g. node-0.kubernetes.local node-0`);
      }
    }
    if (labels[0] !== hostname) {
      fail(line, `hostname ${quote(hostname)} is not the first label of FQDN ${quote(fqdn)}`,
        `the kubelet's node name comes from the hostname; write "${labels[0]}" or change the FQDN`);
    }
    for (const [key, value] of [['ip', ip], ['fqdn', fqdn], ['hostname', hostname]] as const) {
      const prev = seen[key].get(value);
      if (prev !== undefined) fail(line, `duplicate ${key === 'ip' ? 'IP address' : key === 'fqdn' ? 'FQDN' : 'hostname'} ${quote(value)} (also on line ${prev})`, 'every machine needs its own IP, FQDN and hostname');
      seen[key].set(value, line);
    }
    const machine: Machine = { ip, fqdn, hostname, role: subnet ? 'worker' : 'control-plane', line };
    if (subnet !== undefined) {
      const r = parseCidr(subnet);
      if (!r.ok) fail(line, `pod subnet ${r.reason}`, r.meant ? `did you mean ${r.meant}?` : 'write it as a.b.c.d/n, e.g. 10.200.0.0/24');
      const net = (r as { ok: true; net: Network }).net;
      if (!within(net, clusterNet)) {
        fail(line, `pod subnet ${subnet} is outside the cluster CIDR ${settings.clusterCidr}`,
          'pick a subnet inside clusterCidr, or change clusterCidr in cluster.yaml');
      }
      if (overlaps(net, serviceNet)) fail(line, `pod subnet ${subnet} overlaps the service CIDR ${settings.serviceCidr}`, 'pick another subnet');
      if (net.prefix > SMALLEST_POD_PREFIX) {
        fail(line, `pod subnet ${subnet} is too small for the node's pods: it holds ${2 ** (32 - net.prefix)} addresses`,
          `use a /${SMALLEST_POD_PREFIX} or larger (the tutorial uses a /24): the kubelet runs up to 110 pods (its default maxPods), ` +
            `each needs an address, and the network, the bridge and the broadcast address take three more; a /${SMALLEST_POD_PREFIX} holds ${2 ** (32 - SMALLEST_POD_PREFIX) - 3} pods`);
      }
      for (const other of nets) {
        if (overlaps(net, other.net)) {
          fail(line, `pod subnet ${subnet} overlaps ${other.net.text} of ${other.m.hostname} (line ${other.m.line})`,
            'every worker needs its own subnet, e.g. 10.200.N.0/24');
        }
      }
      nets.push({ net, m: machine });
      machine.podSubnet = subnet;
    }
    machines.push(machine);
  });

  // Machine addresses may not fall into any pod subnet or the service range: routing would break.
  for (const m of machines) {
    const ipNum = parseIPv4(m.ip)!;
    if (contains(serviceNet, ipNum)) fail(m.line, `IP ${m.ip} lies inside the service CIDR ${settings.serviceCidr}`, 'machine addresses must be outside the service range');
    for (const { net, m: owner } of nets) {
      if (contains(net, ipNum)) {
        fail(Math.max(m.line, owner.line), `pod subnet ${net.text} of ${owner.hostname} contains the IP ${m.ip} of ${m.hostname}`,
          'pod subnets must not overlap the machines\' own network');
      }
    }
    if (contains(clusterNet, ipNum)) {
      fail(m.line, `IP ${m.ip} of ${m.hostname} lies inside the cluster CIDR ${settings.clusterCidr}, the pods' network`,
        'machine addresses must be outside clusterCidr (routes send that range to the pods), or change clusterCidr in cluster.yaml');
    }
  }

  if (machines.length === 0) {
    throw new InputError('no machines: the file has no machine lines (only blank lines or comments)',
      'one machine per line, "IP FQDN HOSTNAME [POD_SUBNET]": a control-plane machine without a pod subnet, ' +
        'e.g. "10.240.0.10 server.kubernetes.local server", and workers with one, e.g. "10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24"',
      { file: shown });
  }
  const controlPlanes = machines.filter((m) => m.role === 'control-plane');
  if (controlPlanes.length === 0) {
    throw new InputError('no control-plane machine: every line has a pod subnet',
      'add a line without a 4th column for the server, e.g. "10.240.0.10 server.kubernetes.local server"', { file: shown });
  }
  const apiName = sharedApiName({ controlPlanes });
  const taken = machines.find((m) => m.fqdn === apiName);
  if (taken) {
    fail(taken.line, `${quote(taken.fqdn)} is the name every control-plane machine answers to in a cluster of several (the jumpbox's kubeconfig dials it)`,
      `give this machine another name, e.g. ${taken.hostname}-0.${taken.fqdn.split('.').slice(1).join('.')}`);
  }
  if (controlPlanes.length % 2 === 0 && settings.evenControlPlanes !== true) {
    // Most likely a worker whose pod subnet was left out: the first control plane listed after a worker, else the last.
    const suspect = controlPlanes.find((c) => machines.some((m) => m.role === 'worker' && m.line < c.line)) ?? controlPlanes.at(-1)!;
    const n = controlPlanes.length;
    const k = n / 2 - 1;
    fail(suspect.line, `${n} control-plane machines (${controlPlanes.map((c) => c.hostname).join(', ')}): ${n} etcd members tolerate ${k} failure${k === 1 ? '' : 's'}, no more than ${n - 1} would, with one more machine that can fail`,
      `did you forget the pod subnet on ${suspect.hostname}? A line without one is a control-plane machine. To run ${n} on purpose, set evenControlPlanes: true in cluster.yaml`);
  }
  const apiServerName = controlPlanes[0]!.fqdn;
  return {
    dir: paths.dir,
    machinesFile: paths.file,
    clusterFile: paths.clusterFile,
    machines,
    controlPlanes,
    workers: machines.filter((m) => m.role === 'worker'),
    settings,
    serviceIp: nthAddress(serviceNet, 1),
    clusterDnsIp: settings.dns.clusterIP ?? defaultClusterDnsIp(settings.serviceCidr),
    apiServerName,
    apiServerUrl: `https://${apiServerName}:${settings.apiPort}`,
  };
}

/** Picks machines by exact hostname (node-1 never matches node-10); unknown names are input errors. */
export function selectMachines(inv: Inventory, names: string[] | undefined): Machine[] {
  if (!names || names.length === 0) return inv.machines;
  for (const n of names) {
    if (!inv.machines.some((m) => m.hostname === n)) {
      const near = didYouMean(closest(n, inv.machines.map((m) => m.hostname)));
      throw new InputError(`no machine named "${n}" in machines.txt`,
        `${near ? `${near} ` : ''}known machines: ${inv.machines.map((m) => m.hostname).join(', ')}`);
    }
  }
  return inv.machines.filter((m) => names.includes(m.hostname));
}

export { displayPath };
