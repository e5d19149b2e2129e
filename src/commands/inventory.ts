// `hardway inventory`: validates machines.txt and cluster.yaml and shows what hardway understood.
import { INVENTORY_OPTIONS, jsonOption, machinesFile, say, type CommandModule } from '../cli/command.ts';
import { jumpboxApiUrl } from '../api-endpoints.ts';
import { sharedApiName } from '../api-names.ts';
import { resolve } from 'node:path';
import { checkPinnedVersions } from '../download/pinned-versions.ts';
import { BUILTIN_VERSIONS_FILE } from '../download/versions.ts';
import { displayPath } from '../input-file.ts';
import { loadInventory } from '../inventory.ts';
import { becomeOf } from '../cluster-settings.ts';

/** Shows the validated inventory (machines, roles, derived cluster values), or the first problem in it. */
export const inventoryCommand: CommandModule = {
  name: 'inventory',
  details:
    'Every line of machines.txt and key of cluster.yaml is checked; the first problem is shown with its file and line. ' +
    'A versions.* release that "hardway download" cannot fetch (no published digests: see checksums in docs/cluster-yaml.md) ' +
    'or that hardway cannot render files for is refused here, with the releases that can be used. ' +
    'The API server shown is the address pki/jumpbox.kubeconfig dials.',
  options: {
    ...INVENTORY_OPTIONS,
    json: jsonOption("{ok, machines, serviceIp, apiServerName, apiServerUrl (what pki/jumpbox.kubeconfig dials), settings}"),
  },
  examples: [
    ['hardway inventory', 'check the project in this directory and show its machines'],
    ['hardway inventory --dir lab-demo --json', 'the same for the project in lab-demo/, as JSON'],
  ],
  jsonFields: { machines: [] },
  async run(ctx) {
    const { values, stdout } = ctx;
    const inv = loadInventory(machinesFile(ctx));
    // A version download or render would refuse is refused here, with the ones that can be used.
    const custom = ctx.env.HARDWAY_VERSIONS_FILE ? resolve(ctx.cwd, ctx.env.HARDWAY_VERSIONS_FILE) : undefined;
    checkPinnedVersions(inv.settings, { file: inv.clusterFile, shownAs: displayPath(inv.clusterFile) },
      { file: custom ?? BUILTIN_VERSIONS_FILE, shownAs: custom ?? 'src/download/versions.json' });
    if (values.json) {
      const { settings, machines, serviceIp } = inv;
      // The address the user's kubeconfig (pki/jumpbox.kubeconfig) dials, from the one function that makes it.
      const apiServerUrl = jumpboxApiUrl(inv);
      const apiServerName = sharedApiName(inv) ?? inv.apiServerName;
      const ssh = { ...settings.ssh, become: becomeOf(settings.ssh) };
      say(stdout, JSON.stringify({ ok: true, machines, serviceIp, apiServerName, apiServerUrl, settings: { ...settings, ssh } }, null, 2));
      return 0;
    }
    const rows = inv.machines.map((m) => [m.hostname, m.role, m.ip, m.fqdn, m.podSubnet ?? '-']);
    const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length), 8));
    for (const r of [['HOSTNAME', 'ROLE', 'IP', 'FQDN', 'POD SUBNET'], ...rows]) {
      say(stdout, r.map((c, i) => (i < 4 ? c.padEnd(widths[i]!) : c)).join('  '));
    }
    const s = inv.settings;
    say(stdout);
    // What pki/jumpbox.kubeconfig dials (one function makes both): with several control planes, a name pinned to each.
    const shared = sharedApiName(inv) ? ` (pinned to ${inv.controlPlanes.map((m) => m.hostname).join(', ')})` : '';
    say(stdout, `API server      ${jumpboxApiUrl(inv)}${shared}`);
    say(stdout, `cluster CIDR    ${s.clusterCidr}`);
    say(stdout, `service CIDR    ${s.serviceCidr} (kubernetes Service IP ${inv.serviceIp})`);
    say(stdout, `cluster domain  ${s.clusterDomain}`);
    say(stdout, `login           ${loginLine(s.ssh)}`);
    say(stdout, `keys            ${s.keyAlgorithm}, certificates valid ${s.certValidityDays} days`);
    // Each registry with its mirrors in the order containerd tries them (certs.d/<registry>/hosts.toml).
    for (const [i, [name, r]] of Object.entries(s.registries ?? {}).entries()) {
      const mirrors = r.mirrors.map((m) => `${m.url}${m.plainHttp ? ' (plain HTTP)' : ''}${m.ca ? ` (CA ${m.ca.file})` : ''}${m.skipVerify ? ' (certificate not verified)' : ''}`);
      say(stdout, `${i === 0 ? 'registries' : ''}`.padEnd(16) + `${name} -> ${mirrors.join(', ')}`);
    }
    return 0;
  },
};

/** Who hardway logs in as and how its commands become root's. */
function loginLine(ssh: Parameters<typeof becomeOf>[0]): string {
  if (ssh.user === 'root') return 'root over SSH, commands run as root';
  return becomeOf(ssh) === 'sudo'
    ? `${ssh.user} over SSH, every command raised with sudo -n (passwordless sudo required)`
    : `${ssh.user} over SSH, commands run as ${ssh.user} (ssh.become: none)`;
}
