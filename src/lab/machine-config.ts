// The files that make a lab machine itself: address, sshd policy, cloud-init seed and datasource.
// Pure: each function returns file contents; machine.ts writes them into the machine's overlay.
import { nthAddress, parseIPv4, formatIPv4 } from '../net/ipv4.ts';
import type { LabMachine } from './types.ts';

/** The lab resolver's place in the subnet: an address no machine holds (the host is .1, the registry .5, servers .10+, workers .20+). */
export const RESOLVER_OFFSET = 2;

/** The resolver a lab machine is given: RESOLVER_OFFSET of its own subnet. */
export function labResolver(m: Pick<LabMachine, 'ip'>, prefix: number): string {
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  const base = (parseIPv4(m.ip)! & mask) >>> 0;
  return nthAddress({ base, prefix, text: `${formatIPv4(base)}/${prefix}` }, RESOLVER_OFFSET);
}

/**
 * /etc/resolv.conf: a resolver on the lab's own bridge that nobody answers at, as a VM gets one
 * from its network; the lab has no way out, so a name that is not the cluster's fails (after one
 * second, one try) instead of leaving the lab. CoreDNS forwards what it does not know to the
 * node's resolvers and refuses to start without any; 127.0.0.x would make it forward to itself.
 */
export function resolvConf(m: Pick<LabMachine, 'ip'>, prefix: number): string {
  return [
    '# Written by hardway lab: a resolver address on the lab bridge that nothing answers at (the lab has',
    '# no way out). Names of the cluster come from /etc/hosts (hardway pin-hosts) and, in pods, CoreDNS.',
    `nameserver ${labResolver(m, prefix)}`,
    'options timeout:1 attempts:1', '',
  ].join('\n');
}

/** A file to place in a machine's root, with its mode. */
export interface MachineFile {
  path: string;
  content: string;
  mode: number;
}

/** systemd-networkd config for the nspawn veth (host0): static address, no gateway, no DNS. Sorts before Debian's 80-container-host0.network. */
export function host0Network(m: LabMachine, prefix: number): string {
  return [
    '# Written by hardway lab: the machine\'s address on the lab bridge. No Gateway= and no DNS=:',
    '# nothing in the lab has a route out.',
    '[Match]', 'Name=host0', '',
    '[Network]', `Address=${m.ip}/${prefix}`, 'LinkLocalAddressing=no', 'IPv6AcceptRA=no', '',
  ].join('\n');
}

/** sshd drop-in: only the host key the lab recorded, root by key only (or not at all beside a login user), no passwords. */
export function sshdConfig(loginUser?: string): string {
  return [
    '# Written by hardway lab. Included before the defaults in sshd_config, so these win.',
    'HostKey /etc/ssh/ssh_host_ed25519_key',
    // As cloud images come: a login user with sudo, and root's SSH login refused.
    `PermitRootLogin ${loginUser === undefined ? 'prohibit-password' : 'no'}`,
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'UseDNS no', '',
  ].join('\n');
}

/** cloud-init policy: NoCloud (the seed in the machine) is the only datasource, so no metadata address is ever probed; cloud-init leaves networking and the host keys alone. */
export function cloudConfig(): string {
  return [
    '# Written by hardway lab.',
    'datasource_list: [ NoCloud, None ]',
    'network: {config: disabled}',
    'ssh_deletekeys: false',
    'ssh_genkeytypes: []',
    'disable_root: false',
    'users: []',
    'apt_preserve_sources_list: true',
    'locale: false # minbase has no locales package; update-locale would fail', '',
  ].join('\n');
}

/** NoCloud meta-data: an instance id that stays the same across reboots and the hostname. */
export function metaData(lab: string, m: LabMachine): string {
  return `instance-id: hardway-${lab}-${m.hostname}\nlocal-hostname: ${m.hostname}\n`;
}

/**
 * NoCloud user-data: cloud-init owns /etc/hosts and rewrites it at every boot, as on a cloud VM.
 * With a login user, cloud-init makes it as a cloud image's default user is made: the lab key,
 * passwordless sudo (its line in /etc/sudoers.d/90-cloud-init-users), no password.
 */
export function userData(m: LabMachine, login?: { user: string; authorizedKey: string }): string {
  const base = `#cloud-config\nhostname: ${m.hostname}\nfqdn: ${m.fqdn}\nmanage_etc_hosts: true\n`;
  if (!login) return base;
  return base + [
    'users:',
    `  - name: ${login.user}`,
    '    shell: /bin/bash',
    '    lock_passwd: true',
    "    sudo: 'ALL=(ALL) NOPASSWD:ALL'",
    '    ssh_authorized_keys:',
    `      - ${JSON.stringify(login.authorizedKey.trim())}`, '',
  ].join('\n');
}

/**
 * Run at every boot before sysinit.target: what a real kubelet, containerd and runc need inside a
 * container machine that a VM has anyway. Each line names the failure it prevents (lab-notes.md).
 */
export function kubeletHostScript(): string {
  return [
    '#!/bin/sh',
    '# Written by hardway lab: runs at every boot (hardway-lab-kubelet-host.service).',
    '# The kubelet\'s OOM watcher opens /dev/kmsg: "failed to create kubelet: open /dev/kmsg".',
    '[ -e /dev/kmsg ] || mknod -m 0600 /dev/kmsg c 1 11',
    '# nspawn mounts the cgroup v1 controllers read-only: "mkdir /sys/fs/cgroup/cpuset/kubepods.slice:',
    '# read-only file system". The kubelet and runc make cgroups for pods there.',
    'if [ ! -e /sys/fs/cgroup/cgroup.controllers ]; then',
    '  mount -o remount,rw /sys/fs/cgroup',
    '  for c in /sys/fs/cgroup/*; do',
    '    mountpoint -q "$c" || continue',
    '    mount -o remount,rw "$c" 2>/dev/null || mount -o remount,rw,bind "$c"',
    '  done',
    'fi',
    'exit 0', '',
  ].join('\n');
}

/** The oneshot unit that runs kubeletHostScript early in every boot. */
export function kubeletHostUnit(): string {
  return [
    '# Written by hardway lab.',
    '[Unit]',
    'Description=hardway lab: give a container machine what a kubelet needs (/dev/kmsg, writable cgroups)',
    'DefaultDependencies=no',
    'Before=sysinit.target',
    'ConditionVirtualization=container', '',
    '[Service]',
    'Type=oneshot',
    'RemainAfterExit=yes',
    `ExecStart=/${KUBELET_HOST_SCRIPT}`, '',
    '[Install]',
    'WantedBy=sysinit.target', '',
  ].join('\n');
}

const KUBELET_HOST_SCRIPT = 'usr/local/sbin/hardway-lab-kubelet-host';
const KUBELET_HOST_UNIT = 'etc/systemd/system/hardway-lab-kubelet-host.service';

/**
 * A NoCloud seed given from outside the lab (the test stand-in of `multipass launch --cloud-init`):
 * the machine's cloud-init reads it instead of the lab's own meta-data and user-data.
 */
export interface NoCloudSeed {
  metaData: string;
  userData: string;
  vendorData?: string;
}

const SEED_DIR = 'var/lib/cloud/seed/nocloud';

// The lab's own seed, or the one given; a given seed may carry secrets (host keys), so 0600.
function seedFiles(lab: string, m: LabMachine, seed: NoCloudSeed | undefined, login: { user: string; authorizedKey: string } | undefined): MachineFile[] {
  if (!seed) {
    return [
      { path: `${SEED_DIR}/meta-data`, content: metaData(lab, m), mode: 0o644 },
      { path: `${SEED_DIR}/user-data`, content: userData(m, login), mode: 0o644 },
    ];
  }
  return [
    { path: `${SEED_DIR}/meta-data`, content: seed.metaData, mode: 0o600 },
    { path: `${SEED_DIR}/user-data`, content: seed.userData, mode: 0o600 },
    ...(seed.vendorData === undefined ? [] : [{ path: `${SEED_DIR}/vendor-data`, content: seed.vendorData, mode: 0o600 }]),
  ];
}

/**
 * Every file a machine gets besides its keys and machine-id; `seed` replaces the lab's NoCloud seed;
 * `loginUser`: the lab key goes to that user (made by cloud-init), not to root, whose SSH is refused.
 */
export function machineFiles(lab: string, m: LabMachine, prefix: number, authorizedKey: string, seed?: NoCloudSeed, loginUser?: string): MachineFile[] {
  const login = loginUser === undefined ? undefined : { user: loginUser, authorizedKey };
  return [
    { path: 'etc/hostname', content: `${m.hostname}\n`, mode: 0o644 },
    { path: 'etc/resolv.conf', content: resolvConf(m, prefix), mode: 0o644 },
    { path: 'etc/systemd/network/10-host0.network', content: host0Network(m, prefix), mode: 0o644 },
    { path: 'etc/ssh/sshd_config.d/10-hardway.conf', content: sshdConfig(loginUser), mode: 0o644 },
    ...(login ? [] : [{ path: 'root/.ssh/authorized_keys', content: authorizedKey.trim() + '\n', mode: 0o600 }]),
    { path: 'etc/cloud/cloud.cfg.d/90-hardway.cfg', content: cloudConfig(), mode: 0o644 },
    ...seedFiles(lab, m, seed, login),
    { path: KUBELET_HOST_SCRIPT, content: kubeletHostScript(), mode: 0o755 },
    { path: KUBELET_HOST_UNIT, content: kubeletHostUnit(), mode: 0o644 },
  ];
}

/** Units enabled by symlink (no chroot needed): networkd brings up host0 at boot. */
export const ENABLED_UNITS: Array<{ link: string; target: string }> = [
  { link: 'etc/systemd/system/multi-user.target.wants/systemd-networkd.service', target: '/lib/systemd/system/systemd-networkd.service' },
  { link: 'etc/systemd/system/sockets.target.wants/systemd-networkd.socket', target: '/lib/systemd/system/systemd-networkd.socket' },
  { link: 'etc/systemd/system/network-online.target.wants/systemd-networkd-wait-online.service', target: '/lib/systemd/system/systemd-networkd-wait-online.service' },
  { link: 'etc/systemd/system/dbus-org.freedesktop.network1.service', target: '/lib/systemd/system/systemd-networkd.service' },
  { link: 'etc/systemd/system/sysinit.target.wants/hardway-lab-kubelet-host.service', target: `/${KUBELET_HOST_UNIT}` },
];
