// The rendered files parse in their own formats and carry the values the cluster needs.
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { defaultSettings, type ClusterSettings } from '../../src/cluster-settings.ts';
import { parseInventory, type Inventory } from '../../src/inventory.ts';
import { ANY, SERVER, WORKER } from '../../src/layout.ts';
import { renderMachine, type RenderedFile } from '../../src/render/machine.ts';
import { hostsBlock } from '../../src/render/hosts.ts';
import { podRoutes } from '../../src/render/routes.ts';

const EXAMPLE = `
10.240.0.10 server.kubernetes.local server
10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24
10.240.0.21 node-1.kubernetes.local node-1 10.200.1.0/24
`;
const THREE_CP = `
10.240.0.11 cp-1.kubernetes.local cp-1
10.240.0.12 cp-2.kubernetes.local cp-2
10.240.0.13 cp-3.kubernetes.local cp-3
10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24
10.240.0.21 node-1.kubernetes.local node-1 10.200.1.0/24
10.240.0.22 node-10.kubernetes.local node-10 10.200.10.0/24
`;

function inventory(text: string, settings: Partial<ClusterSettings> = {}): Inventory {
  return parseInventory(text, { ...defaultSettings(), ...settings }, { file: 'machines.txt', dir: '/x', clusterFile: '/x/cluster.yaml' });
}
const host = (inv: Inventory, name: string) => inv.machines.find((m) => m.hostname === name)!;
const file = (files: RenderedFile[], path: string) => {
  const f = files.find((x) => x.path === path);
  if (!f) throw new Error(`not rendered: ${path} (have ${files.map((x) => x.path).join(', ')})`);
  return f;
};
/** The flags of a unit's ExecStart line, continuation lines joined. */
const execFlags = (unit: string) =>
  /^ExecStart=(.*?[^\\])$/ms.exec(unit)![1]!.replace(/\\\n/g, ' ').trim().split(/\s+/).slice(1);
const flag = (unit: string, name: string) => execFlags(unit).find((f) => f.startsWith(`--${name}=`))?.slice(name.length + 3);

/**
 * A strict reader for the TOML subset the containerd templates use: comments, table headers with
 * bare, "double" or 'single' quoted keys, and key = string | integer | boolean | array of strings.
 * Anything else, or a table or key defined twice, is an error (what containerd would reject too).
 */
function readToml(text: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  const seenTables = new Set<string>();
  let table = root;
  const KEY = String.raw`(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')`;
  const splitKeys = (s: string) => [...s.matchAll(new RegExp(KEY, 'g'))].map((m) => m[0].replace(/^["']|["']$/g, ''));
  const STRING = String.raw`(?:"[^"\\]*"|'[^']*')`;
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/^\s+|\s+$/g, '');
    if (line === '' || line.startsWith('#')) return;
    const header = new RegExp(String.raw`^\[(${KEY}(?:\.${KEY})*)\]$`).exec(line);
    if (header) {
      const keys = splitKeys(header[1]!);
      const id = JSON.stringify(keys);
      if (seenTables.has(id)) throw new Error(`line ${i + 1}: table defined twice`);
      seenTables.add(id);
      table = root;
      for (const k of keys) table = (table[k] ??= {}) as Record<string, unknown>;
      return;
    }
    const kv = new RegExp(String.raw`^(${KEY})\s*=\s*(${STRING}|-?\d+|true|false|\[\s*(?:${STRING}\s*(?:,\s*${STRING}\s*)*)?\])$`).exec(line);
    if (!kv) throw new Error(`line ${i + 1}: not TOML this reader understands: ${raw}`);
    const key = splitKeys(kv[1]!)[0]!;
    if (key in table) throw new Error(`line ${i + 1}: key ${key} defined twice`);
    const v = kv[2]!;
    table[key] = v === 'true' ? true : v === 'false' ? false : /^-?\d+$/.test(v) ? Number(v)
      : v.startsWith('[') ? [...v.matchAll(new RegExp(STRING, 'g'))].map((m) => m[0].slice(1, -1)) : v.slice(1, -1);
  });
  return root;
}
const at = (obj: unknown, ...path: string[]) => path.reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], obj);

describe('worker files', () => {
  const inv = inventory(EXAMPLE);
  const node0 = renderMachine(inv, host(inv, 'node-0'));

  it('CNI bridge and loopback configs are JSON with the worker\'s own pod subnet', () => {
    const bridge = JSON.parse(file(node0, WORKER.cniBridgeConf).content);
    expect(bridge).toEqual({
      cniVersion: '1.0.0', name: 'bridge', type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: true,
      ipam: { type: 'host-local', ranges: [[{ subnet: '10.200.0.0/24' }]], routes: [{ dst: '0.0.0.0/0' }] },
    });
    expect(JSON.parse(file(node0, WORKER.cniLoopbackConf).content)).toEqual({ cniVersion: '1.0.0', name: 'lo', type: 'loopback' });
    const node1 = renderMachine(inv, host(inv, 'node-1'));
    expect(JSON.parse(file(node1, WORKER.cniBridgeConf).content).ipam.ranges).toEqual([[{ subnet: '10.200.1.0/24' }]]);
  });

  it('kubelet config is a KubeletConfiguration with secure auth, systemd cgroups and this node\'s values', () => {
    const cfg = parseYaml(file(node0, WORKER.kubeletConfig).content);
    expect(cfg).toMatchObject({
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: WORKER.kubeletCaCrt } },
      authorization: { mode: 'Webhook' },
      cgroupDriver: 'systemd',
      containerRuntimeEndpoint: 'unix:///var/run/containerd/containerd.sock',
      podCIDR: '10.200.0.0/24',
      resolvConf: '/etc/resolv.conf',
      registerNode: true,
      port: 10250,
      tlsCertFile: WORKER.kubeletCrt,
      tlsPrivateKeyFile: WORKER.kubeletKey,
      runtimeRequestTimeout: '15m',
      clusterDomain: 'cluster.local',
    });
    expect(cfg).not.toHaveProperty('clusterDNS');
  });

  it('kubelet config takes the resolver file detected on the machine, and refuses an unsafe one', () => {
    const files = renderMachine(inv, host(inv, 'node-0'), { resolvConf: '/run/systemd/resolve/resolv.conf' });
    expect(parseYaml(file(files, WORKER.kubeletConfig).content).resolvConf).toBe('/run/systemd/resolve/resolv.conf');
    expect(() => renderMachine(inv, host(inv, 'node-0'), { resolvConf: 'etc/resolv.conf"\nx: y' })).toThrow(/resolver file/);
  });

  it('kube-proxy config is a KubeProxyConfiguration in iptables mode over the cluster CIDR', () => {
    const custom = inventory(EXAMPLE, { clusterCidr: '10.200.0.0/16' });
    const cfg = parseYaml(file(renderMachine(custom, host(custom, 'node-1')), WORKER.kubeProxyConfig).content);
    expect(cfg).toEqual({
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      clientConnection: { kubeconfig: WORKER.kubeProxyKubeconfig },
      mode: 'iptables',
      clusterCIDR: '10.200.0.0/16',
    });
  });

  it('containerd 1.x gets config schema 2 with the CRI plugin, overlayfs, runc v2 and systemd cgroups', () => {
    const toml = readToml(file(renderMachine(inv, host(inv, 'node-0'), { containerdMajor: 1, containerdMinor: 6 }), WORKER.containerdConfig).content);
    expect(toml.version).toBe(2);
    const cri = at(toml, 'plugins', 'io.containerd.grpc.v1.cri');
    expect(at(cri, 'containerd', 'snapshotter')).toBe('overlayfs');
    expect(at(cri, 'containerd', 'default_runtime_name')).toBe('runc');
    expect(at(cri, 'containerd', 'runtimes', 'runc', 'runtime_type')).toBe('io.containerd.runc.v2');
    expect(at(cri, 'containerd', 'runtimes', 'runc', 'options', 'SystemdCgroup')).toBe(true);
    expect(at(cri, 'cni')).toEqual({ bin_dir: WORKER.cniBin, conf_dir: WORKER.cniConfDir });
  });

  it('containerd 2.0 gets schema 3 with bin_dir, 2.1 and later bin_dirs', () => {
    for (const [minor, cni] of [
      [0, { bin_dir: WORKER.cniBin, conf_dir: WORKER.cniConfDir }],
      [1, { bin_dirs: [WORKER.cniBin], conf_dir: WORKER.cniConfDir }],
    ] as const) {
      const toml = readToml(file(renderMachine(inv, host(inv, 'node-0'), { containerdMajor: 2, containerdMinor: minor }), WORKER.containerdConfig).content);
      expect(toml.version).toBe(3);
      expect(at(toml, 'plugins', 'io.containerd.cri.v1.images', 'snapshotter')).toBe('overlayfs');
      const runtime = at(toml, 'plugins', 'io.containerd.cri.v1.runtime');
      expect(at(runtime, 'containerd', 'default_runtime_name')).toBe('runc');
      expect(at(runtime, 'containerd', 'runtimes', 'runc', 'runtime_type')).toBe('io.containerd.runc.v2');
      expect(at(runtime, 'containerd', 'runtimes', 'runc', 'options', 'SystemdCgroup')).toBe(true);
      expect(at(runtime, 'cni')).toEqual(cni);
      expect(at(toml, 'plugins', 'io.containerd.grpc.v1.cri')).toBeUndefined();
    }
  });

  it('containerd schema defaults to the version pinned in the cluster settings', () => {
    const old = inventory(EXAMPLE, { versions: { ...defaultSettings().versions, containerd: 'v1.7.24' } });
    expect(file(renderMachine(old, host(old, 'node-0')), WORKER.containerdConfig).content).toMatch(/^version = 2$/m);
    expect(file(node0, WORKER.containerdConfig).content).toMatch(/^version = 3$/m);
  });

  it('units start the binaries with their configs; kubelet needs containerd', () => {
    const kubelet = file(node0, `${ANY.units}/kubelet.service`).content;
    expect(execFlags(kubelet)).toEqual([`--config=${WORKER.kubeletConfig}`, `--kubeconfig=${WORKER.kubeletKubeconfig}`, '--v=2']);
    expect(kubelet).toMatch(/^Requires=containerd\.service$/m);
    expect(kubelet).toMatch(/^After=containerd\.service$/m);
    expect(flag(file(node0, `${ANY.units}/kube-proxy.service`).content, 'config')).toBe(WORKER.kubeProxyConfig);
    const containerd = file(node0, `${ANY.units}/containerd.service`).content;
    for (const line of ['ExecStartPre=-/sbin/modprobe overlay', 'Delegate=yes', 'KillMode=process', 'LimitNOFILE=infinity', 'Type=notify']) {
      expect(containerd).toContain(`\n${line}\n`);
    }
    expect(containerd).toMatch(/^ExecStart=\/usr\/local\/bin\/containerd /m);
  });

  it('kernel module and sysctl files carry the settings bridged pod networking needs', () => {
    expect(file(node0, WORKER.modulesLoad).content).toMatch(/^br_netfilter$/m);
    const sysctl = file(node0, WORKER.sysctl).content;
    for (const key of ['net.bridge.bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-ip6tables', 'net.ipv4.ip_forward']) {
      expect(sysctl).toMatch(new RegExp(`^${key.replace(/\./g, '\\.')} = 1$`, 'm'));
    }
  });

  it('a worker gets no control-plane file', () => {
    expect(node0.some((f) => f.path.includes('kube-apiserver') || f.path.includes('etcd'))).toBe(false);
  });
});

describe('control-plane files', () => {
  const inv = inventory(THREE_CP);
  const cp2 = renderMachine(inv, host(inv, 'cp-2'));
  const etcd = file(cp2, `${ANY.units}/etcd.service`).content;
  const api = file(cp2, `${ANY.units}/kube-apiserver.service`).content;

  it('etcd lists every control plane in its initial cluster and serves TLS with client and peer auth', () => {
    expect(flag(etcd, 'initial-cluster')).toBe('cp-1=https://10.240.0.11:2380,cp-2=https://10.240.0.12:2380,cp-3=https://10.240.0.13:2380');
    expect(flag(etcd, 'name')).toBe('cp-2');
    expect(flag(etcd, 'listen-client-urls')).toBe('https://10.240.0.12:2379,https://127.0.0.1:2379');
    expect(flag(etcd, 'listen-peer-urls')).toBe('https://10.240.0.12:2380');
    expect(flag(etcd, 'initial-advertise-peer-urls')).toBe('https://10.240.0.12:2380');
    expect(flag(etcd, 'initial-cluster-state')).toBe('new');
    expect(flag(etcd, 'data-dir')).toBe(SERVER.etcdDataDir);
    for (const f of ['cert-file', 'peer-cert-file']) expect(flag(etcd, f)).toBe(SERVER.etcdCrt);
    for (const f of ['key-file', 'peer-key-file']) expect(flag(etcd, f)).toBe(SERVER.etcdKey);
    for (const f of ['trusted-ca-file', 'peer-trusted-ca-file']) expect(flag(etcd, f)).toBe(SERVER.etcdCa);
    expect(execFlags(etcd)).toEqual(expect.arrayContaining(['--client-cert-auth', '--peer-client-cert-auth']));
    expect(execFlags(etcd).join(' ')).not.toMatch(/http:\/\//);
    expect(etcd).toMatch(/^Type=notify$/m);
    expect(etcd).toMatch(/^Restart=on-failure$/m);
  });

  it('the API server uses etcd over TLS, its own etcd first, and the cluster\'s service range', () => {
    expect(flag(api, 'etcd-servers')).toBe('https://127.0.0.1:2379,https://10.240.0.11:2379,https://10.240.0.13:2379');
    expect(flag(api, 'etcd-cafile')).toBe(SERVER.etcdCaCrt);
    expect(flag(api, 'etcd-certfile')).toBe(SERVER.etcdClientCrt);
    expect(flag(api, 'etcd-keyfile')).toBe(SERVER.etcdClientKey);
    expect(flag(api, 'service-cluster-ip-range')).toBe('10.32.0.0/24');
    expect(flag(api, 'service-account-issuer')).toBe('https://cp-1.kubernetes.local:6443');
    expect(flag(api, 'advertise-address')).toBe('10.240.0.12');
    expect(flag(api, 'authorization-mode')).toBe('Node,RBAC');
    expect(flag(api, 'enable-admission-plugins')).toBe('NamespaceLifecycle,NodeRestriction,LimitRanger,ServiceAccount,DefaultStorageClass,ResourceQuota');
    expect(flag(api, 'kubelet-client-certificate')).toBe(SERVER.apiServerCrt);
    expect(flag(api, 'kubelet-certificate-authority')).toBe(SERVER.caCrt);
    expect(flag(api, 'service-account-key-file')).toBe(SERVER.serviceAccountsCrt);
    expect(flag(api, 'service-account-signing-key-file')).toBe(SERVER.serviceAccountsKey);
    expect(flag(api, 'encryption-provider-config')).toBe(SERVER.encryptionConfig);
    expect(flag(api, 'audit-policy-file')).toBe(SERVER.auditPolicy);
    expect(flag(api, 'runtime-config')).toBe('api/all=true');
  });

  it('cluster settings flow into the API server and controller manager flags', () => {
    const custom = inventory(EXAMPLE, { serviceCidr: '10.96.0.0/16', clusterCidr: '10.200.0.0/16', apiPort: 8443, nodePortRange: '31000-31999' });
    const files = renderMachine(custom, host(custom, 'server'));
    const a = file(files, `${ANY.units}/kube-apiserver.service`).content;
    expect(flag(a, 'service-cluster-ip-range')).toBe('10.96.0.0/16');
    expect(flag(a, 'secure-port')).toBe('8443');
    expect(flag(a, 'service-node-port-range')).toBe('31000-31999');
    expect(flag(a, 'service-account-issuer')).toBe('https://server.kubernetes.local:8443');
    const cm = file(files, `${ANY.units}/kube-controller-manager.service`).content;
    expect(flag(cm, 'service-cluster-ip-range')).toBe('10.96.0.0/16');
    expect(flag(cm, 'cluster-cidr')).toBe('10.200.0.0/16');
    expect(flag(cm, 'cluster-signing-cert-file')).toBe(SERVER.caCrt);
    expect(flag(cm, 'cluster-signing-key-file')).toBe(SERVER.caKey);
    expect(flag(cm, 'kubeconfig')).toBe(SERVER.controllerManagerKubeconfig);
    expect(flag(cm, 'use-service-account-credentials')).toBe('true');
  });

  it('scheduler config and audit policy are YAML of the right kind', () => {
    expect(parseYaml(file(cp2, SERVER.schedulerConfig).content)).toEqual({
      apiVersion: 'kubescheduler.config.k8s.io/v1',
      kind: 'KubeSchedulerConfiguration',
      clientConnection: { kubeconfig: SERVER.schedulerKubeconfig },
      leaderElection: { leaderElect: true },
    });
    expect(flag(file(cp2, `${ANY.units}/kube-scheduler.service`).content, 'config')).toBe(SERVER.schedulerConfig);
    expect(parseYaml(file(cp2, SERVER.auditPolicy).content)).toMatchObject({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', rules: [{ level: 'Metadata' }] });
  });

  it('each file names the step that installs it and the services a change restarts', () => {
    const summary = Object.fromEntries(cp2.map((f) => [f.path, [f.step, f.services.join(',')]]));
    expect(summary).toMatchObject({
      [`${ANY.units}/etcd.service`]: ['bootstrap-etcd', 'etcd'],
      [`${ANY.units}/kube-apiserver.service`]: ['bootstrap-control-plane', 'kube-apiserver'],
      [SERVER.schedulerConfig]: ['bootstrap-control-plane', 'kube-scheduler'],
      [ANY.routesUnit]: ['routes', 'hardway-pod-routes'],
      '/etc/hosts.hardway-block': ['pin-hosts', ''],
    });
    expect(cp2.every((f) => f.mode === 0o644)).toBe(true);
  });
});

describe('every machine: hosts block and pod routes', () => {
  const inv = inventory(THREE_CP);

  it('the hosts block lists every machine once between the markers, and is rendered for both targets', () => {
    const block = hostsBlock(inv);
    const lines = block.trimEnd().split('\n');
    expect(lines).toHaveLength(inv.machines.length + 2);
    expect(lines).toContain('10.240.0.22 node-10.kubernetes.local node-10');
    for (const m of inv.machines) {
      const files = renderMachine(inv, m).filter((f) => f.step === 'pin-hosts');
      expect(files.map((f) => [f.path, f.mergeInto])).toEqual([
        ['/etc/hosts.hardway-block', '/etc/hosts'],
        ['/etc/cloud/templates/hosts.debian.tmpl.hardway-block', '/etc/cloud/templates/hosts.debian.tmpl'],
      ]);
      expect(files.every((f) => f.content === block)).toBe(true);
    }
  });

  it('each machine routes every other worker\'s subnet and never its own', () => {
    for (const m of inv.machines) {
      const routes = podRoutes(inv, m);
      const expected = inv.workers.filter((w) => w !== m);
      expect(routes.map((r) => `${r.subnet} via ${r.via}`)).toEqual(expected.map((w) => `${w.podSubnet} via ${w.ip}`));
      const unit = file(renderMachine(inv, m), ANY.routesUnit).content;
      const execs = unit.split('\n').filter((l) => l.startsWith('ExecStart='));
      expect(execs).toEqual(expected.map((w) => `ExecStart=/sbin/ip route replace ${w.podSubnet} via ${w.ip}`));
      if (m.podSubnet) expect(unit).not.toContain(m.podSubnet + ' ');
      for (const line of ['Type=oneshot', 'RemainAfterExit=yes', 'After=network-online.target']) expect(unit).toContain(`\n${line}\n`);
    }
  });

  it('a machine with no route to install gets no routes unit', () => {
    const lone = inventory('10.240.0.10 server.kubernetes.local server\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24\n');
    expect(renderMachine(lone, host(lone, 'node-0')).some((f) => f.path === ANY.routesUnit)).toBe(false);
    expect(renderMachine(lone, host(lone, 'server')).some((f) => f.path === ANY.routesUnit)).toBe(true);
  });

  it('every YAML, JSON and TOML file of every machine parses, for both containerd schemas', () => {
    let checked = 0;
    for (const text of [EXAMPLE, THREE_CP]) {
      const i = inventory(text);
      for (const m of i.machines) {
        for (const containerdMajor of [1, 2]) {
          for (const f of renderMachine(i, m, { containerdMajor })) {
            if (f.path.endsWith('.yaml')) {
              expect(parseYaml(f.content), f.path).toMatchObject({ apiVersion: expect.any(String), kind: expect.any(String) });
            } else if (f.path.startsWith(WORKER.cniConfDir + '/')) {
              expect(JSON.parse(f.content), f.path).toMatchObject({ cniVersion: '1.0.0' });
            } else if (f.path.endsWith('.toml')) {
              expect(readToml(f.content).version, f.path).toBe(containerdMajor + 1);
            } else continue;
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(30);
  });

  it('rendering is pure: the same inputs give the same bytes', () => {
    const m = host(inv, 'node-1');
    expect(renderMachine(inv, m)).toEqual(renderMachine(inv, m));
  });
});
