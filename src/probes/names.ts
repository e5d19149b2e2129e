// Probes of names: what the machine's resolver answers for the cluster's names (pin-hosts checks
// what it pinned, verify and doctor check them all), its hostname, and cloud-init's view of hosts.
import { HOSTS_MARKERS } from '../layout.ts';
import { sh, type Command } from '../shell.ts';
import { probe } from './probe.ts';

// glibc's files backend, for every name at once: where /etc/nsswitch.conf asks `files` first for
// hosts, a name that /etc/hosts holds is answered from it and nothing else: the first line naming
// it (case-insensitively), an IPv6 line before an IPv4 one as `getent hosts` asks. Prints `NAME
// ADDRESS`, or `NAME` alone for a name /etc/hosts does not answer.
const FILES_BACKEND = `BEGIN {
  while ((getline l < nsswitch) > 0) { sub(/#.*/, "", l); if (l ~ /^hosts:/) { sub(/^hosts:[ \\t]*/, "", l); files = (l ~ /^files([ \\t]|$)/) } }
  while (files && (getline l < hosts) > 0) {
    sub(/#.*/, "", l); f = split(l, a, /[ \\t]+/); s = (a[1] == "") ? 1 : 0
    if (f - s < 2) continue
    for (i = s + 2; i <= f; i++) { k = tolower(a[i]); if (index(a[s + 1], ":")) { if (!(k in v6)) v6[k] = a[s + 1] } else if (!(k in v4)) v4[k] = a[s + 1] }
  }
  n = split(want, w, " ")
  for (j = 1; j <= n; j++) { k = tolower(w[j]); print w[j], (k in v6) ? v6[k] : (k in v4) ? v4[k] : "" }
}`;

/**
 * `NAME FIRST-ADDRESS` per name, as the machine's resolver answers `getent hosts NAME`. Names that
 * /etc/hosts answers are read from it in one awk: a getent per name on every machine made this
 * check grow with the square of the machines (400 processes per machine at 1+100). Any other name
 * (DNS, or an nsswitch.conf that does not ask files first) is asked of getent on its own. `files`
 * points at other copies of the two files (tests).
 */
export function resolveNames(names: readonly string[], files: { hosts?: string; nsswitch?: string } = {}): Command {
  const [hosts, nsswitch] = [files.hosts ?? '/etc/hosts', files.nsswitch ?? '/etc/nsswitch.conf'];
  return sh`awk -v want=${names.join(' ')} -v hosts=${hosts} -v nsswitch=${nsswitch} ${FILES_BACKEND} | while read -r n ip; do if [ -n "$ip" ]; then echo "$n $ip"; else printf '%s %s\\n' "$n" "$(getent hosts "$n")"; fi; done`;
}

/** The first address of each name in `resolveNames` output ('' for a name that does not resolve). */
export function resolvedAddresses(stdout: string): Map<string, string> {
  const lines = stdout.split('\n').map((l) => l.trim().split(/\s+/)).filter(([n]) => n);
  return new Map(lines.map(([n, ip]) => [n!, ip ?? '']));
}

/** The first address the machine's resolver gives each name ('' when none). */
export const namesResolved = probe('names', (names: readonly string[]) => resolveNames(names), (a) => resolvedAddresses(a.stdout));

/** The running hostname. */
export const hostname = probe('hostname', () => hostnameCommand(), (a) => a.stdout.trim());

/**
 * The running hostname, read by the facts shell from the kernel (no `hostname` process). A string
 * of /proc/sys reads whole byte by byte (the sysctl ints do not: see sysctlValues). `file` is another copy (tests).
 */
export function hostnameCommand(file = '/proc/sys/kernel/hostname'): Command {
  return sh`IFS= read -r h < ${file}; printf '%s' "$h"`;
}

/** Whether hostnamectl can set the hostname (it is there and systemd runs). */
export const hostnamectlWorks = probe('hostnamectl', () => sh`command -v hostnamectl >/dev/null && test -d /run/systemd/system`, (a) => a.code === 0);

/** Whether cloud-init is installed. */
export const cloudInitInstalled = probe('cloud-init', () => sh`command -v cloud-init`, (a) => a.code === 0);

/**
 * Only the lines of cloud-init's config (cloud.cfg, cloud.cfg.d/*.cfg, then user-data: its merge
 * order) that say its distribution and manage_etc_hosts, all cloudInitFacts reads: the whole files
 * were some 10 KB per machine to send, log and scan on every run.
 */
export const cloudConfigKeys = probe('cloud-config-keys', () =>
  sh`grep -hE '^[[:space:]]+distro:|^manage_etc_hosts[[:space:]]*:' /etc/cloud/cloud.cfg /etc/cloud/cloud.cfg.d/*.cfg /var/lib/cloud/instance/cloud-config.txt 2>/dev/null; :`);

/** Only hardway's block of each cloud-init hosts template (`== FILE` then its block). */
export const hostsTemplateBlocks = probe('hosts-template-blocks', () =>
  sh`cd /etc/cloud/templates 2>/dev/null && awk -v b=${HOSTS_MARKERS.begin} -v e=${HOSTS_MARKERS.end} 'FNR==1{print "== " FILENAME; p=0} index($0,b)==1{p=1} p{print} index($0,e)==1{p=0}' hosts.*.tmpl 2>/dev/null; :`);
