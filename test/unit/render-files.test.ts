// Control-plane and every-machine files parse and carry the values the cluster needs.
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ANY, SERVER, WORKER } from '../../src/layout.ts';
import { renderMachine } from '../../src/render/machine.ts';
import { hostsBlock } from '../../src/render/hosts.ts';
import { podRoutes } from '../../src/render/routes.ts';
import { EXAMPLE, execFlags, file, flag, host, inventory, readToml, THREE_CP } from './render-fixtures.ts';

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
    expect(flag(cm, 'cluster-signing-cert-file')).toBe(SERVER.caSigningCrt);
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

  it('the hosts block lists every machine once between the markers, then the shared API name on each control plane, and is rendered for both targets', () => {
    const block = hostsBlock(inv);
    const lines = block.trimEnd().split('\n');
    expect(lines).toHaveLength(inv.machines.length + inv.controlPlanes.length + 2);
    expect(lines).toContain('10.240.0.22 node-10.kubernetes.local node-10');
    expect(lines.slice(-4, -1)).toEqual(['10.240.0.11 api.kubernetes.local', '10.240.0.12 api.kubernetes.local', '10.240.0.13 api.kubernetes.local']);
    // One control plane: the machines only, as before.
    expect(hostsBlock(inventory(EXAMPLE)).trimEnd().split('\n')).toHaveLength(3 + 2);
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
