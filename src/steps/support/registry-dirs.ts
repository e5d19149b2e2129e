// The certs.d directories hardway wrote and no longer wants: a registry removed from cluster.yaml
// leaves its directory on every worker unless something removes it. hardway owns exactly the
// directories whose hosts.toml starts with its marker, and removes only those (and, inside one it
// still wants, only the CA files it names mirror-N-ca.crt); a directory made by hand stays.
import type { ProbeResult } from '../../engine/facts.ts';
import type { ExecChange } from '../../engine/types.ts';
import { FailureError } from '../../errors.ts';
import { WORKER } from '../../layout.ts';
import { MIRROR_CA_FILE, registryOfDir } from '../../render/registries.ts';
import { sh } from '../../shell.ts';

// A directory or file name as containerd's hosts lookup could use it (never "." or "..": the glob skips dot names).
const NAME = /^[A-Za-z0-9_][A-Za-z0-9._:-]*$/;

/** The marked directories found by the marked-registry-dirs probe, each with the names in it. */
export function parseMarkedDirs(listing: ProbeResult): Map<string, string[]> {
  if (listing.code !== 0) {
    throw new FailureError(`could not list ${WORKER.containerdCertsDir} (exit ${listing.code})`, `check that ${WORKER.containerdCertsDir} is readable by the SSH user`);
  }
  const dirs = new Map<string, string[]>();
  for (const line of listing.stdout.split('\n')) {
    const slash = line.indexOf('/');
    const dir = line.slice(0, slash);
    const name = line.slice(slash + 1);
    if (slash < 1 || !NAME.test(dir) || !NAME.test(name)) continue;
    dirs.set(dir, [...(dirs.get(dir) ?? []), name]);
  }
  return dirs;
}

/**
 * The removals that leave certs.d as rendered: each marked directory that no registry of
 * cluster.yaml renders, and each mirror CA file that a kept directory no longer names. `rendered`
 * is every path the step installs (only those under certs.d count). Pure.
 */
export function staleRegistryChanges(listing: ProbeResult, rendered: readonly string[]): ExecChange[] {
  const root = `${WORKER.containerdCertsDir}/`;
  const wanted = new Set(rendered.filter((p) => p.startsWith(root)).map((p) => p.slice(root.length)));
  const wantedDirs = new Set([...wanted].map((p) => p.slice(0, p.indexOf('/'))));
  const changes: ExecChange[] = [];
  for (const [dir, names] of parseMarkedDirs(listing)) {
    const path = `${root}${dir}`;
    if (!wantedDirs.has(dir)) {
      changes.push({ kind: 'exec', cmd: sh`rm -rf -- ${path}`, reason: `hardway wrote it for registry ${registryOfDir(dir)}, which cluster.yaml no longer lists under registries` });
      continue;
    }
    const stale = names.filter((n) => MIRROR_CA_FILE.test(n) && !wanted.has(`${dir}/${n}`)).map((n) => `${path}/${n}`);
    if (stale.length > 0) changes.push({ kind: 'exec', cmd: sh`rm -f -- ${stale}`, reason: `no mirror of ${registryOfDir(dir)} in cluster.yaml has this CA any more` });
  }
  return changes;
}
