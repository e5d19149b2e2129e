// Each lab machine in cgroups of its own. With no systemd on the host, `nspawn --keep-unit` keeps
// a machine in the cgroup it was started from, so every machine's systemd built its tree in the
// same place: /payload/system.slice/kubelet.service held the kubelets of all machines, and one
// unit starting or stopping on several machines at once raced on that one directory (status
// 219/CGROUP now and then). So nspawn starts in <hierarchy>/hardway-lab/<machine>.
import { existsSync, mkdirSync, readdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';

/** Where cgroup hierarchies with processes live: hybrid (unified + name=systemd) or pure v2. */
const HIERARCHIES = ['/sys/fs/cgroup/unified', '/sys/fs/cgroup/systemd', '/sys/fs/cgroup'];

/** The parent of every lab machine's cgroup in each hierarchy. */
const PARENT = 'hardway-lab';

/** The machine's cgroup in every hierarchy this host has (created); nspawn moves into each. */
export function createMachineCgroups(unit: string, roots: readonly string[] = HIERARCHIES): string[] {
  const dirs = roots.filter((r) => existsSync(join(r, 'cgroup.procs'))).map((r) => join(r, PARENT, unit));
  for (const d of dirs) mkdirSync(d, { recursive: true });
  return dirs;
}

/** Removes the machine's cgroups (each must be empty of processes: call after it stopped). */
export function removeMachineCgroups(unit: string, roots: readonly string[] = HIERARCHIES): void {
  for (const r of roots) {
    const dir = join(r, PARENT, unit);
    if (existsSync(dir)) removeTree(dir);
  }
}

/** rmdir bottom-up: cgroupfs directories go with rmdir once they hold no process and no child. */
function removeTree(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeTree(join(dir, e.name));
  try {
    rmdirSync(dir);
  } catch {
    // still populated (a process that has not exited yet): left for the next down or start
  }
}
