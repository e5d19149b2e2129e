// What doctor asks each machine, as one facts batch (one SSH round trip): text files it reads and
// read-only commands. Nothing here writes: no file, no image, no cache entry (the facts script runs
// without its SHA-cache writes), and the test pull fetches a manifest to /dev/null.
import type { Inventory, Machine } from '../inventory.ts';
import { SERVER, WORKER } from '../layout.ts';
import { images, testPull } from '../probes/containerd.ts';
import { kubeconfigEndpoint, kubeletResolver } from '../probes/kubelet.ts';
import { cloudConfigKeys, hostsTemplateBlocks, namesResolved } from '../probes/names.ts';
import { routes } from '../probes/network.ts';
import type { ProbeRequest } from '../probes/probe.ts';
import { clock, sysctls } from '../probes/system.ts';
import { journalsOfDown, serviceStates } from '../probes/systemd.ts';
import { WORKER_SYSCTLS } from '../steps/support/components.ts';
import { CONTROL_PLANE_SERVICES, servicesOfStep, WORKER_SERVICES } from '../steps/step-names.ts';

/** The services doctor expects active on a machine of this role (the step table's own lists). */
export function servicesOf(m: Machine): string[] {
  return m.role === 'control-plane' ? [...servicesOfStep('bootstrap-etcd'), ...CONTROL_PLANE_SERVICES] : [...WORKER_SERVICES];
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

/** The request of one machine: files to read (text, never secrets) and probes of the registry, by the name their answer is kept under. */
export interface MachineRequests {
  reads: string[];
  probes: Record<string, ProbeRequest>;
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
  const probes: Record<string, ProbeRequest> = {
    clock: clock.ask(),
    names: namesResolved.ask(inv.machines.flatMap((x) => [x.hostname, x.fqdn])),
    services: serviceStates.ask(services),
    // The journal's last lines only of a service that is not active.
    journal: journalsOfDown.ask(services),
    // Only hardway's block of each cloud-init hosts template (the distribution's is chosen later).
    templates: hostsTemplateBlocks.ask(),
    // cloud-init's config in pin-hosts' merge order, only the lines that say its distribution and manage_etc_hosts.
    cloudCfg: cloudConfigKeys.ask(),
    routes: routes.ask(),
  };
  if (m.role === 'worker') {
    probes.sysctls = sysctls.ask(WORKER_SYSCTLS);
    probes[KUBELET_DNS_PROBE] = kubeletResolver.ask();
    for (const [name, path] of Object.entries(KUBECONFIGS)) probes[`kubeconfig ${name}`] = kubeconfigEndpoint.ask(path);
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
  const probes: Record<string, ProbeRequest> = Object.fromEntries(testImages.map((image) => [pullProbe(image), testPull.ask(image)]));
  // What the node has cached, to tell when a cached image hides a broken pull.
  probes[CACHED_PROBE] = images.ask(testImages);
  return { reads: [], probes };
}
