// The files that make a lab machine itself: address, sshd policy, cloud-init seed and datasource.
// Pure: each function returns file contents; machine.ts writes them into the machine's overlay.
import type { LabMachine } from './types.ts';

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

/** sshd drop-in: only the host key the lab recorded, root by key only, no passwords. */
export function sshdConfig(): string {
  return [
    '# Written by hardway lab. Included before the defaults in sshd_config, so these win.',
    'HostKey /etc/ssh/ssh_host_ed25519_key',
    'PermitRootLogin prohibit-password',
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

/** NoCloud user-data: cloud-init owns /etc/hosts and rewrites it at every boot, as on a cloud VM. */
export function userData(m: LabMachine): string {
  return `#cloud-config\nhostname: ${m.hostname}\nfqdn: ${m.fqdn}\nmanage_etc_hosts: true\n`;
}

/** Every file a machine gets besides its keys and machine-id. */
export function machineFiles(lab: string, m: LabMachine, prefix: number, authorizedKey: string): MachineFile[] {
  return [
    { path: 'etc/hostname', content: `${m.hostname}\n`, mode: 0o644 },
    { path: 'etc/systemd/network/10-host0.network', content: host0Network(m, prefix), mode: 0o644 },
    { path: 'etc/ssh/sshd_config.d/10-hardway.conf', content: sshdConfig(), mode: 0o644 },
    { path: 'root/.ssh/authorized_keys', content: authorizedKey.trim() + '\n', mode: 0o600 },
    { path: 'etc/cloud/cloud.cfg.d/90-hardway.cfg', content: cloudConfig(), mode: 0o644 },
    { path: 'var/lib/cloud/seed/nocloud/meta-data', content: metaData(lab, m), mode: 0o644 },
    { path: 'var/lib/cloud/seed/nocloud/user-data', content: userData(m), mode: 0o644 },
  ];
}

/** Units enabled by symlink (no chroot needed): networkd brings up host0 at boot. */
export const ENABLED_UNITS: Array<{ link: string; target: string }> = [
  { link: 'etc/systemd/system/multi-user.target.wants/systemd-networkd.service', target: '/lib/systemd/system/systemd-networkd.service' },
  { link: 'etc/systemd/system/sockets.target.wants/systemd-networkd.socket', target: '/lib/systemd/system/systemd-networkd.socket' },
  { link: 'etc/systemd/system/network-online.target.wants/systemd-networkd-wait-online.service', target: '/lib/systemd/system/systemd-networkd-wait-online.service' },
  { link: 'etc/systemd/system/dbus-org.freedesktop.network1.service', target: '/lib/systemd/system/systemd-networkd.service' },
];
