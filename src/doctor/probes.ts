// What doctor asks each machine, as one facts batch (one SSH round trip): text files it reads and
// read-only commands. Nothing here writes: no file, no image, no cache entry (the facts script runs
// without its SHA-cache writes), and the test pull fetches a manifest to /dev/null.
import type { Inventory, Machine } from '../inventory.ts';
import { HOSTS_MARKERS, SERVER, WORKER } from '../layout.ts';
import { sh, type Command } from '../shell.ts';
import { CONTROL_PLANE_SERVICES } from '../steps/support/components.ts';
import { resolveNames } from '../steps/support/names.ts';
import { serviceStatesCommand } from '../steps/support/inspect.ts';
import { WORKER_SYSCTLS } from '../steps/support/components.ts';

/** The services doctor expects active on a machine of this role. */
export function servicesOf(m: Machine): string[] {
  return m.role === 'control-plane' ? ['etcd', ...CONTROL_PLANE_SERVICES] : ['containerd', 'kubelet', 'kube-proxy'];
}

/** A kubeconfig whose server and client certificate doctor reads (never its key). */
export const KUBECONFIGS = { kubelet: WORKER.kubeletKubeconfig, 'kube-proxy': WORKER.kubeProxyKubeconfig } as const;

/** Certificates doctor reads on each role: the installed path and the pki/ file it came from. */
export function certificateFiles(m: Machine): { path: string; pki: string; what: string }[] {
  if (m.role === 'control-plane') {
    return [
      { path: SERVER.caCrt, pki: 'pki/ca.crt', what: 'the cluster CA' },
      { path: SERVER.apiServerCrt, pki: 'pki/kube-api-server.crt', what: "the API server's serving certificate" },
    ];
  }
  return [
    { path: WORKER.kubeletCaCrt, pki: 'pki/ca.crt', what: "the CA the kubelet trusts for clients" },
    { path: WORKER.kubeletCrt, pki: `pki/machines/${m.hostname}/kubelet.crt`, what: "the kubelet's serving certificate" },
  ];
}

/** The request of one machine: files to read (text, never secrets) and named probe commands. */
export interface MachineRequests {
  reads: string[];
  probes: Record<string, Command>;
}

/** Probe name of the kubelet's resolver file, systemd-resolved's state and that file's nameservers. */
export const KUBELET_DNS_PROBE = 'kubelet dns';

/** Probe name of the list of images in the node's cache (containerd's k8s.io namespace). */
export const CACHED_PROBE = 'cached images';

/** Probe name of the test pull of one image. */
export const pullProbe = (image: string) => `pull ${image}`;

/** Everything doctor asks `m` at once, given the rendered files it compares (test pulls aside: pullRequests). */
export function requestsFor(inv: Inventory, m: Machine, rendered: string[]): MachineRequests {
  const services = servicesOf(m);
  const probes: Record<string, Command> = {
    clock: sh`date +%s`,
    names: resolveNames(inv.machines.flatMap((x) => [x.hostname, x.fqdn])),
    services: serviceStatesCommand(services),
    // The journal's last lines only of a service that is not active: one process per such service.
    // (One systemctl for every state, then a journalctl per service that is down.)
    journal: sh`set -- $(systemctl is-active ${services}); for s in ${services}; do [ "$1" = active ] || { echo "== $s"; journalctl -u "$s" -n 4 --no-pager -o cat 2>&1; }; shift; done; :`,
    // Only hardway's block of each cloud-init hosts template (the distribution's is chosen later).
    templates: sh`cd /etc/cloud/templates 2>/dev/null && awk -v b=${HOSTS_MARKERS.begin} -v e=${HOSTS_MARKERS.end} 'FNR==1{print "== " FILENAME; p=0} index($0,b)==1{p=1} p{print} index($0,e)==1{p=0}' hosts.*.tmpl 2>/dev/null; :`,
    // cloud-init's config in pin-hosts' merge order, only the lines that say its distribution and manage_etc_hosts.
    cloudCfg: sh`grep -hE '^[[:space:]]+distro:|^manage_etc_hosts[[:space:]]*:' /etc/cloud/cloud.cfg /etc/cloud/cloud.cfg.d/*.cfg /var/lib/cloud/instance/cloud-config.txt 2>/dev/null; :`,
    routes: sh`ip -4 route show`,
  };
  if (m.role === 'worker') {
    // `KEY = VALUE` lines from one process; a key that does not exist (no br_netfilter) has no line.
    probes.sysctls = sh`sysctl ${WORKER_SYSCTLS} 2>/dev/null; :`;
    // The kubelet's resolver file as its config names it, whether systemd-resolved runs (hardway's
    // rule for that file follows it), and the file's nameserver lines: what pods with
    // dnsPolicy Default, CoreDNS among them, are given.
    probes[KUBELET_DNS_PROBE] = sh`f=$(sed -n 's/^resolvConf: *//p' ${WORKER.kubeletConfig} 2>/dev/null | tr -d '"'); echo "resolvConf=$f"; echo "resolved=$(systemctl is-active systemd-resolved 2>/dev/null)"; [ -n "$f" ] && grep -h '^nameserver' "$f" 2>/dev/null; :`;
    // The server and client certificate lines only: the key line never leaves the machine.
    for (const [name, path] of Object.entries(KUBECONFIGS)) {
      probes[`kubeconfig ${name}`] = sh`sed -n -e 's/^ *server: *//p' -e 's/^ *client-certificate-data: *//p' ${path}`;
    }
  }
  const reads = ['/etc/hosts', '/etc/os-release', ...certificateFiles(m).map((c) => c.path), ...(m.role === 'worker' ? [WORKER.kubeletConfig] : []), ...rendered];
  return { reads, probes };
}

/**
 * The test pulls of a worker, asked beside the main batch once the images are known (they may come
 * from the API). A fetch from the registry itself, never from the node's image cache (a cached image
 * hides a broken mirror from every IfNotPresent pull): the manifest goes to /dev/null, nothing is stored.
 */
export function pullRequests(m: Machine, testImages: string[]): MachineRequests {
  if (m.role !== 'worker' || testImages.length === 0) return { reads: [], probes: {} };
  const probes = Object.fromEntries(testImages.map((image) =>
    [pullProbe(image), sh`PATH=$PATH:${WORKER.bin}; timeout 10 ctr content fetch-object --hosts-dir ${WORKER.containerdCertsDir} ${image} 2>&1 >/dev/null`]));
  // What the node has cached, to tell when a cached image hides a broken pull.
  probes[CACHED_PROBE] = sh`PATH=$PATH:${WORKER.bin}; ctr -n k8s.io images ls -q`;
  return { reads: [], probes };
}
