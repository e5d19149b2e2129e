// Worker files parse in their own formats and carry the values a worker needs.
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { defaultSettings } from '../../src/cluster-settings.ts';
import { ANY, WORKER } from '../../src/layout.ts';
import { renderMachine } from '../../src/render/machine.ts';
import { at, EXAMPLE, execFlags, file, flag, host, inventory, readToml } from './render-fixtures.ts';

describe('worker files', () => {
  const inv = inventory(EXAMPLE);
  const node0 = renderMachine(inv, host(inv, 'node-0'));

  it('CNI bridge and loopback configs are JSON with the worker\'s own pod subnet', () => {
    const bridge = JSON.parse(file(node0, WORKER.cniBridgeConf).content);
    expect(bridge).toEqual({
      cniVersion: '1.0.0', name: 'bridge', type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: true,
      // A pod reaches itself through a Service (kube-proxy may pick it as the endpoint).
      hairpinMode: true,
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
      // The kube-dns Service: the 10th address of the service CIDR.
      clusterDNS: ['10.32.0.10'],
    });
  });

  it('kubelet config points pods at dns.clusterIP, and at no cluster DNS when the add-on is off', () => {
    const at = (dns: object) => {
      const settings = { ...defaultSettings(), dns: { enabled: true, ...dns } };
      const i = inventory(EXAMPLE, settings);
      return parseYaml(file(renderMachine(i, host(i, 'node-0')), WORKER.kubeletConfig).content);
    };
    expect(at({ clusterIP: '10.32.0.53' }).clusterDNS).toEqual(['10.32.0.53']);
    const off = at({ enabled: false });
    expect(off).not.toHaveProperty('clusterDNS');
    expect(off.clusterDomain).toBe('cluster.local');
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

