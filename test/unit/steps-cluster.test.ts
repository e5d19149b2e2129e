// Planning logic of the cluster steps that needs no machine: which pki files go where, which
// route changes follow from a live table, and which service actions follow from file changes.
import { describe, expect, it } from 'vitest';
import { parseInventory } from '../../src/inventory.ts';
import { defaultSettings } from '../../src/cluster-settings.ts';
import { placementContent, placements } from '../../src/steps/support/placements.ts';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asOneCommand, routeChanges } from '../../src/steps/routes.ts';
import { parseRoutes } from '../../src/probes/network.ts';
import { podRoutes } from '../../src/render/routes.ts';
import { serviceChanges, withRestarts, withServiceChanges } from '../../src/steps/support/services.ts';
import { parseServiceStates } from '../../src/probes/systemd.ts';
import type { Change } from '../../src/engine/types.ts';
import { PKI, SERVER } from '../../src/layout.ts';

const inv = parseInventory(
  '10.240.0.10 server.kubernetes.local server\n' +
    '10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24\n' +
    '10.240.0.21 node-1.kubernetes.local node-1 10.200.1.0/24\n',
  defaultSettings(),
  { file: '/p/machines.txt', dir: '/p', clusterFile: '/p/cluster.yaml' },
);
const [server, node0, node1] = inv.machines as [typeof inv.machines[0], typeof inv.machines[0], typeof inv.machines[0]];

describe('distribute placements', () => {
  it('sends the CA key to the control plane only, and each worker only its own node key', () => {
    expect(placements(inv, server).some((p) => p.from === PKI.ca.key && p.to === SERVER.caKey)).toBe(true);
    for (const w of [node0, node1]) {
      const froms = placements(inv, w).map((p) => p.from);
      expect(froms).not.toContain(PKI.ca.key);
      expect(froms).not.toContain(PKI.etcdCa.key);
      expect(froms.filter((f) => f.endsWith('.key'))).toEqual([PKI.machine(w.hostname, 'kubelet').key]);
    }
  });

  it('gives the controller manager the signing CA alone (it refuses a bundle), every other reader the whole pki/ca.crt', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-placements-'));
    const [a, b] = ['-----BEGIN CERTIFICATE-----\nQUFB\n-----END CERTIFICATE-----\n', '-----BEGIN CERTIFICATE-----\nQkJC\n-----END CERTIFICATE-----\n'];
    mkdirSync(join(dir, 'pki'));
    writeFileSync(join(dir, PKI.ca.crt), a + b);
    const byPath = new Map(placements(inv, server).map((p) => [p.to, p]));
    expect(byPath.get(SERVER.caSigningCrt)!.services).toEqual(['kube-controller-manager']);
    expect(placementContent({ dir }, byPath.get(SERVER.caSigningCrt)!).toString()).toBe(a);
    expect(placementContent({ dir }, byPath.get(SERVER.caCrt)!).toString()).toBe(a + b);
  });

  it('marks every key and kubeconfig secret (installed 0600)', () => {
    for (const m of inv.machines) {
      for (const p of placements(inv, m)) {
        const secretish = p.from.endsWith('.key') || p.from.endsWith('.kubeconfig') || p.from === PKI.encryptionConfig;
        expect(p.secret, p.from).toBe(secretish);
      }
    }
  });
});

describe('routes', () => {
  const table = [
    'default via 10.0.2.2 dev eth0',
    '10.200.0.0/24 dev cni0 proto kernel scope link src 10.200.0.1',
    '10.200.1.0/24 via 10.240.0.99 dev host0',
    '10.200.7.0/24 via 10.240.0.27 dev host0',
    '10.240.0.0/24 dev host0 proto kernel scope link src 10.240.0.20',
  ].join('\n');

  it('parses ip route output', () => {
    expect(parseRoutes(table)[2]).toEqual({ dst: '10.200.1.0/24', via: '10.240.0.99' });
    expect(parseRoutes(table)[1]).toEqual({ dst: '10.200.0.0/24' });
  });

  it('replaces wrong routes, deletes stale pod routes, and leaves kernel and other routes alone', () => {
    const cmds = routeChanges(parseRoutes(table), podRoutes(inv, node0), inv.settings.clusterCidr).map((c) => (c as { cmd: { text: string } }).cmd.text);
    expect(cmds).toEqual([
      'ip route del 10.200.1.0/24 via 10.240.0.99',
      'ip route del 10.200.7.0/24 via 10.240.0.27',
      'ip route replace 10.200.1.0/24 via 10.240.0.21',
    ]);
  });

  it("runs all of a machine's route changes as one command, every reason kept", () => {
    const table = '10.200.1.0/24 via 10.240.0.99 dev host0\n';
    const [one, ...rest] = asOneCommand(routeChanges(parseRoutes(table), podRoutes(inv, node0), inv.settings.clusterCidr));
    expect(rest).toEqual([]);
    expect(one!.kind === 'exec' && one!.cmd.text).toBe('ip route del 10.200.1.0/24 via 10.240.0.99 && ip route replace 10.200.1.0/24 via 10.240.0.21');
    expect(one!.reason).toBe('no worker has this pod subnet at that address any more; pods of node-1');
  });

  it('plans nothing when the table already matches', () => {
    const ok = '10.200.0.0/24 via 10.240.0.20 dev host0\n10.200.1.0/24 via 10.240.0.21 dev host0\n';
    expect(routeChanges(parseRoutes(ok), podRoutes(inv, server), inv.settings.clusterCidr)).toEqual([]);
  });
});

describe('service changes', () => {
  const factsWith = (states: Record<string, string>) =>
    parseServiceStates(
      ['kubelet', 'kube-proxy', 'etcd', 'containerd']
        .map((svc) => {
          const [enabled, active] = (states[svc] ?? ' inactive').split(' ');
          return `Id=${svc}.service\nActiveState=${active}\nUnitFileState=${enabled}`;
        })
        .join('\n\n'),
    );
  const put = (path: string): Change => ({ kind: 'put', path, content: Buffer.from('x'), mode: 0o644, reason: 'content differs' });
  const texts = (cs: Change[]) => cs.map((c) => (c.kind === 'exec' ? /systemctl [\w-]+(?: --no-reload)?(?: [\w-]+)?/.exec(c.cmd.text)![0] : c.path));

  it('restarts only the service whose input changed, and reloads units first', async () => {
    const inputs = [
      { path: '/etc/systemd/system/kubelet.service', services: ['kubelet'] },
      { path: '/var/lib/kube-proxy/kube-proxy-config.yaml', services: ['kube-proxy'] },
    ];
    const out = serviceChanges(factsWith({ kubelet: 'enabled active', 'kube-proxy': 'enabled active' }), ['kubelet', 'kube-proxy'], inputs, [put('/etc/systemd/system/kubelet.service')]);
    expect(texts(out)).toEqual(['systemctl daemon-reload', 'systemctl restart kubelet']);
  });

  it('installs a new unit without reloading systemd, and reloads when a loaded unit changes', async () => {
    const fresh = parseServiceStates('Id=kubelet.service\nActiveState=inactive\nUnitFileState=\nLoadState=not-found');
    const inputs = [{ path: '/etc/systemd/system/kubelet.service', services: ['kubelet'] }];
    const first = serviceChanges(fresh, ['kubelet'], inputs, [{ ...put('/etc/systemd/system/kubelet.service'), reason: 'missing' } as Change]);
    expect(texts(first)).toEqual(['systemctl enable --no-reload kubelet', 'systemctl restart kubelet']);
    // The start falls back to one reload for a systemd that does not load new unit files by itself.
    const start = first.at(-1)!;
    expect(start.kind === 'exec' ? start.cmd.text : '').toContain('systemctl daemon-reload && systemctl restart kubelet');
    const loaded = parseServiceStates('Id=kubelet.service\nActiveState=active\nUnitFileState=enabled\nLoadState=loaded');
    expect(texts(serviceChanges(loaded, ['kubelet'], inputs, [put('/etc/systemd/system/kubelet.service')]))).toEqual(['systemctl daemon-reload', 'systemctl restart kubelet']);
  });

  it('plans nothing for an enabled, active service whose inputs did not change', async () => {
    expect(serviceChanges(factsWith({ etcd: 'enabled active' }), ['etcd'], [], [])).toEqual([]);
  });

  it('parses the state of several services from one systemctl show, a missing unit included', () => {
    const states = parseServiceStates('Id=kubelet.service\nActiveState=active\nUnitFileState=enabled\n\nId=nosuch.service\nActiveState=inactive\nUnitFileState=\n');
    expect(states.get('kubelet')).toEqual({ enabled: 'enabled', active: 'active', loaded: true });
    expect(states.get('nosuch')).toEqual({ enabled: '', active: 'inactive', loaded: true });
    const fresh = parseServiceStates('Id=kubelet.service\nActiveState=inactive\nUnitFileState=\nLoadState=not-found\n');
    expect(fresh.get('kubelet')).toEqual({ enabled: '', active: 'inactive', loaded: false });
  });

  it('marks a running service due before the files that restart it go in, and clears the mark with the restart', () => {
    const inputs = [{ path: '/etc/etcd/etcd.crt', services: ['etcd'] }];
    const out = withServiceChanges(factsWith({ etcd: 'enabled active' }), ['etcd'], inputs, [put('/etc/etcd/etcd.crt')]);
    const cmds = out.map((c) => (c.kind === 'exec' ? c.cmd.text : `put ${c.path}`));
    expect(cmds[0]).toBe('mkdir -p /var/lib/hardway/restart-due && touch /var/lib/hardway/restart-due/etcd');
    expect(cmds[1]).toBe('put /etc/etcd/etcd.crt');
    expect(cmds[2]).toMatch(/^\{ systemctl restart etcd .* && rm -f \/var\/lib\/hardway\/restart-due\/etcd && for i in/);
    // A service that is not running is started by the rerun anyway: no mark.
    const fresh = withServiceChanges(factsWith({}), ['etcd'], inputs, [put('/etc/etcd/etcd.crt')]);
    expect(fresh.some((c) => c.kind === 'exec' && c.cmd.text.includes('restart-due'))).toBe(false);
  });

  it('starts each of several new services right after its own inputs (the API server before the other binaries upload), files of no service first', () => {
    const fresh = parseServiceStates(['kube-apiserver', 'kube-controller-manager'].map((s) => `Id=${s}.service\nActiveState=inactive\nUnitFileState=\nLoadState=not-found`).join('\n\n'));
    const inputs = [
      { path: '/usr/local/bin/kube-apiserver', services: ['kube-apiserver'] },
      { path: '/etc/systemd/system/kube-apiserver.service', services: ['kube-apiserver'] },
      { path: '/usr/local/bin/kube-controller-manager', services: ['kube-controller-manager'] },
      { path: '/etc/systemd/system/kube-controller-manager.service', services: ['kube-controller-manager'] },
    ];
    const planned = ['/usr/local/bin/kube-apiserver', '/usr/local/bin/kube-controller-manager', '/usr/local/bin/kubectl',
      '/etc/systemd/system/kube-apiserver.service', '/etc/systemd/system/kube-controller-manager.service'].map(put);
    expect(texts(withServiceChanges(fresh, ['kube-apiserver', 'kube-controller-manager'], inputs, planned))).toEqual([
      '/usr/local/bin/kubectl', '/usr/local/bin/kube-apiserver', '/etc/systemd/system/kube-apiserver.service',
      'systemctl enable --no-reload kube-apiserver', 'systemctl restart kube-apiserver',
      '/usr/local/bin/kube-controller-manager', '/etc/systemd/system/kube-controller-manager.service',
      'systemctl enable --no-reload kube-controller-manager', 'systemctl restart kube-controller-manager',
    ]);
    // A loaded unit that changes needs one daemon-reload before any start: then every file goes first.
    const running = parseServiceStates(['kube-apiserver', 'kube-controller-manager'].map((s) => `Id=${s}.service\nActiveState=active\nUnitFileState=enabled\nLoadState=loaded`).join('\n\n'));
    const restart = withServiceChanges(running, ['kube-apiserver', 'kube-controller-manager'], inputs, planned);
    expect(restart[0]!.kind === 'exec' && restart[0]!.cmd.text).toContain('touch /var/lib/hardway/restart-due/kube-apiserver /var/lib/hardway/restart-due/kube-controller-manager');
    expect(texts(restart.slice(1))).toEqual([
      ...planned.map((c) => (c.kind === 'put' ? c.path : '')), 'systemctl daemon-reload', 'systemctl restart kube-apiserver', 'systemctl restart kube-controller-manager',
    ]);
  });

  it('restarts a service an earlier run marked due though every file is right, and reloads a unit systemd has not loaded', () => {
    const states = parseServiceStates(
      'Id=etcd.service\nActiveState=active\nUnitFileState=enabled\nLoadState=loaded\nNeedDaemonReload=yes\n\nRestartDue=etcd\n',
    );
    expect(states.get('etcd')).toEqual({ enabled: 'enabled', active: 'active', loaded: true, needsReload: true, restartDue: true });
    const out = withServiceChanges(states, ['etcd'], [{ path: '/etc/systemd/system/etcd.service', services: ['etcd'] }], []);
    expect(texts(out)).toEqual(['systemctl daemon-reload', 'systemctl restart etcd']);
    expect(out[1]!.reason).toBe('an earlier run installed new inputs of etcd and stopped before restarting it');
    expect(out[1]!.kind === 'exec' && out[1]!.cmd.text).toContain('rm -f /var/lib/hardway/restart-due/etcd');
  });

  it("distribute marks before its own puts, and leaves an earlier run's mark to the service's own step", () => {
    const inputs = [{ path: '/var/lib/kubelet/kubelet.crt', services: ['kubelet'] }, { path: '/var/lib/kube-proxy/kubeconfig', services: ['kube-proxy'] }];
    const due = parseServiceStates('Id=kubelet.service\nActiveState=active\nUnitFileState=enabled\n\nRestartDue=kubelet\n');
    expect(withRestarts(due, inputs, [])).toEqual([]);
    const fresh = withRestarts(factsWith({ 'kube-proxy': 'enabled active' }), inputs, [put('/var/lib/kube-proxy/kubeconfig')]);
    expect(fresh.map((c) => (c.kind === 'exec' ? c.cmd.text.slice(0, 40) : c.path))).toEqual([
      'mkdir -p /var/lib/hardway/restart-due &&',
      '/var/lib/kube-proxy/kubeconfig',
      'for s in kube-proxy; do if systemctl is-',
    ]);
    expect(withRestarts(factsWith({}), inputs, [])).toEqual([]);
  });

  it('distribute restarts only the services of the changed files, etcd first, then waits for the API server to be ready', () => {
    const inputs = [
      { path: SERVER.caCrt, services: ['kube-apiserver', 'kube-controller-manager'] },
      { path: SERVER.apiServerCrt, services: ['kube-apiserver'] },
      { path: SERVER.etcdCrt, services: ['etcd'] },
      { path: SERVER.schedulerKubeconfig, services: ['kube-scheduler'] },
    ];
    const running = factsWith({ 'kube-apiserver': 'enabled active', etcd: 'enabled active', 'kube-scheduler': 'enabled active' });
    const out = withRestarts(running, inputs, [put(SERVER.apiServerCrt), put(SERVER.etcdCrt)], { apiTimeoutS: 120 });
    const last = out[out.length - 1]!;
    expect(last.kind === 'exec' && last.cmd.text).toBe(
      'for s in etcd kube-apiserver; do if systemctl is-active --quiet "$s"; then systemctl restart "$s" || exit 1; fi; rm -f /var/lib/hardway/restart-due/"$s"; done' +
      ' && if systemctl is-active --quiet kube-apiserver; then for i in $(seq 120); do out=$(kubectl --kubeconfig=/var/lib/kubernetes/admin.kubeconfig --request-timeout=5s get --raw=/readyz 2>&1) && exit 0;' +
      ' [ "$i" -lt 120 ] && sleep 1; done; echo "$out" >&2; exit 1; fi');
    expect(last.reason).toBe('inputs changed for etcd, kube-apiserver (restarted if running; then the API server ready (/readyz))');
    // A kubelet certificate restarts the kubelet alone, and waits for nothing else.
    const kubelet = withRestarts(factsWith({ kubelet: 'enabled active' }), [{ path: '/var/lib/kubelet/kubelet.crt', services: ['kubelet'] }], [put('/var/lib/kubelet/kubelet.crt')], { apiTimeoutS: 120 });
    expect(kubelet.map((c) => (c.kind === 'exec' ? c.cmd.text : c.path)).pop()).toBe(
      'for s in kubelet; do if systemctl is-active --quiet "$s"; then systemctl restart "$s" || exit 1; fi; rm -f /var/lib/hardway/restart-due/"$s"; done');
  });

  it('enables and starts a service that is not running', async () => {
    expect(texts(serviceChanges(factsWith({}), ['containerd'], [], []))).toEqual(['systemctl enable --no-reload containerd', 'systemctl start containerd']);
  });

  it('plans no start for a service systemd restarts by itself (activating, auto-restart), and starts one that failed or is merely activating', () => {
    // As the controller manager is for 5 s after the API server it leads through restarted: the
    // re-plan right after that restart must be empty (seen on a lab upgraded to a new API server unit).
    const show = (sub: string, active = 'activating') => parseServiceStates(`Id=kube-controller-manager.service\nUnitFileState=enabled\nActiveState=${active}\nSubState=${sub}\nLoadState=loaded\n`);
    expect(show('auto-restart').get('kube-controller-manager')).toEqual({ enabled: 'enabled', active: 'activating', loaded: true, autoRestart: true });
    expect(serviceChanges(show('auto-restart'), ['kube-controller-manager'], [], [])).toEqual([]);
    expect(texts(serviceChanges(show('failed', 'failed'), ['kube-controller-manager'], [], []))).toEqual(['systemctl start kube-controller-manager']);
    expect(texts(serviceChanges(show('start'), ['kube-controller-manager'], [], []))).toEqual(['systemctl start kube-controller-manager']);
  });
});
