// The files of a worker: CNI network configs, containerd's config in the schema its version speaks,
// kubelet and kube-proxy configs, their units, and the kernel settings pod networking needs.
import { severalControlPlanes } from '../api-endpoints.ts';
import { InputError } from '../errors.ts';
import type { Inventory, Machine } from '../inventory.ts';
import { ANY, WORKER } from '../layout.ts';
import type { KubernetesDifferences } from './kubernetes-version.ts';
import { renderRegistries } from './registries.ts';
import type { TemplateSet } from './templates.ts';
import type { RenderedFile, RenderOptions, RenderStep, WorkerComponentName } from './types.ts';

/** The containerd version to write config for: from the options, else from settings.versions. */
export function containerdVersion(inv: Inventory, opts: RenderOptions): { major: number; minor: number } {
  if (opts.containerdMajor !== undefined) return { major: opts.containerdMajor, minor: opts.containerdMinor ?? 0 };
  const m = /^v?(\d+)\.(\d+)/.exec(inv.settings.versions.containerd);
  if (!m) throw new InputError(`versions.containerd "${inv.settings.versions.containerd}" has no major.minor version`);
  return { major: Number(m[1]), minor: opts.containerdMinor ?? Number(m[2]) };
}

/** The resolver file for the kubelet, refused when it could break out of the YAML string or is relative. */
export function kubeletResolvConf(opts: RenderOptions): string {
  const file = opts.resolvConf ?? '/etc/resolv.conf';
  if (!/^\/[A-Za-z0-9_./-]+$/.test(file)) {
    throw new InputError(`resolver file "${file}" is not an absolute path of plain characters`,
      'use a path like /etc/resolv.conf or /run/systemd/resolve/resolv.conf');
  }
  return file;
}

/** Where the kubelet reaches containerd's CRI service. */
export const CONTAINERD_ENDPOINT = 'unix:///var/run/containerd/containerd.sock';

/** Every file a worker gets from rendering (hosts and routes aside), for that Kubernetes release. */
export function renderWorker(
  inv: Inventory,
  machine: Machine,
  templates: TemplateSet,
  opts: RenderOptions,
  k8s: KubernetesDifferences,
): RenderedFile[] {
  const ctr = containerdVersion(inv, opts);
  const binDirs = ctr.major > 2 || (ctr.major === 2 && ctr.minor >= 1);
  const { sandboxImage, containerd, kubeProxy } = inv.settings;
  const values = {
    WORKER,
    machine,
    settings: inv.settings,
    resolvConf: kubeletResolvConf(opts),
    clusterDns: inv.settings.dns.enabled ? inv.clusterDnsIp : false,
    cni: binDirs
      ? { binDirKey: 'bin_dirs', binDirValue: `['${WORKER.cniBin}']` }
      : { binDirKey: 'bin_dir', binDirValue: `'${WORKER.cniBin}'` },
    kubelet: {
      runtimeEndpoint: CONTAINERD_ENDPOINT,
      runtimeFlags: k8s.kubeletRuntimeFlags,
      runtimeEndpointField: !k8s.kubeletRuntimeFlags,
      registerNodeField: k8s.kubeletRegisterNodeField,
    },
    // Unset keys render nothing, so containerd keeps its own defaults.
    cri: {
      section: sandboxImage !== undefined || containerd.restrictOomScoreAdj,
      sandboxImage: sandboxImage ?? false,
      restrictOomScoreAdj: containerd.restrictOomScoreAdj,
    },
    // Only with `registries` set: containerd then reads certs.d/<registry>/hosts.toml at each pull.
    registry: { configPath: inv.settings.registries === undefined ? false : WORKER.containerdCertsDir },
    kubeProxy: {
      conntrack: kubeProxy.conntrackMaxPerCore !== undefined,
      conntrackMaxPerCore: kubeProxy.conntrackMaxPerCore ?? 0,
    },
  };
  const file = (step: RenderStep, path: string, template: string, services: string[]): RenderedFile => ({
    path,
    content: templates.render(template, values),
    mode: 0o644,
    step,
    services,
  });
  const unit = (name: WorkerComponentName) => file(name, `${ANY.units}/${name}.service`, `units/${name}.service.hbs`, [name]);
  return [
    // CNI configs are read per pod sandbox; no restart needed.
    file('cni', WORKER.cniBridgeConf, 'templates/10-bridge.conf.hbs', []),
    file('cni', WORKER.cniLoopbackConf, 'templates/99-loopback.conf.hbs', []),
    file('containerd', WORKER.containerdConfig, `templates/containerd-config-v${ctr.major >= 2 ? 3 : 2}.toml.hbs`, ['containerd']),
    unit('containerd'),
    // Registry mirrors: read by containerd at each pull, no restart.
    ...renderRegistries(inv, templates),
    file('kubelet', WORKER.kubeletConfig, 'templates/kubelet-config.yaml.hbs', ['kubelet']),
    unit('kubelet'),
    file('kube-proxy', WORKER.kubeProxyConfig, 'templates/kube-proxy-config.yaml.hbs', ['kube-proxy']),
    unit('kube-proxy'),
    // Restarting these two systemd services applies the files at once, as boot would.
    file('worker-os', WORKER.modulesLoad, 'templates/modules-load.conf.hbs', ['systemd-modules-load']),
    file('worker-os', WORKER.sysctl, 'templates/sysctl.conf.hbs', ['systemd-sysctl']),
    ...renderApiProxy(inv, templates),
  ];
}

/** Several control planes: the node-local haproxy's config, run by Debian's haproxy.service (none with one). */
export function renderApiProxy(inv: Inventory, templates: TemplateSet): RenderedFile[] {
  if (!severalControlPlanes(inv)) return [];
  const values = {
    WORKER,
    settings: inv.settings,
    servers: inv.controlPlanes.map((m) => ({ name: m.hostname, ip: m.ip })),
  };
  const proxyFile = (path: string, content: string): RenderedFile => ({ path, content, mode: 0o644, step: 'api-proxy', services: [API_PROXY_SERVICE] });
  return [
    proxyFile(WORKER.apiProxyConfig, templates.render('templates/haproxy.cfg.hbs', values)),
    proxyFile(WORKER.apiProxyDropIn, templates.render('units/haproxy-api-proxy.conf.hbs', { WORKER })),
  ];
}

/** The service of the node-local API proxy: Debian's haproxy unit, which the drop-in WORKER.apiProxyDropIn points at WORKER.apiProxyConfig. */
export const API_PROXY_SERVICE = 'haproxy';
