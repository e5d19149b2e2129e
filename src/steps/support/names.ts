// Asking a machine's resolver for names: pin-hosts checks what it pinned, verify and doctor check them all.
import { sh, type Command } from '../../shell.ts';

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
export function resolveNames(names: string[], files: { hosts?: string; nsswitch?: string } = {}): Command {
  const [hosts, nsswitch] = [files.hosts ?? '/etc/hosts', files.nsswitch ?? '/etc/nsswitch.conf'];
  return sh`awk -v want=${names.join(' ')} -v hosts=${hosts} -v nsswitch=${nsswitch} ${FILES_BACKEND} | while read -r n ip; do if [ -n "$ip" ]; then echo "$n $ip"; else printf '%s %s\\n' "$n" "$(getent hosts "$n")"; fi; done`;
}

/** The first address of each name in `resolveNames` output ('' for a name that does not resolve). */
export function resolvedAddresses(stdout: string): Map<string, string> {
  const lines = stdout.split('\n').map((l) => l.trim().split(/\s+/)).filter(([n]) => n);
  return new Map(lines.map(([n, ip]) => [n!, ip ?? '']));
}
