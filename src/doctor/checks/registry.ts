// Registries: containerd's config and each hosts.toml against what hardway renders, and a test pull
// through the mirrors that never looks at the node's image cache. Pure.
import type { Machine } from '../../inventory.ts';
import { WORKER } from '../../layout.ts';
import { parseImageList } from '../../probes/containerd.ts';
import { labMachineLine, stepsFix } from '../fixes.ts';
import { CACHED_PROBE, pullProbe } from '../probes.ts';
import { REGISTRY_HOSTNAME } from '../../lab/registry.ts';
import type { DoctorContext, Finding, MachineEvidence } from '../types.ts';

/** containerd's config and every certs.d file of cluster.yaml's registries, missing or different. */
export function registryFileFindings(ctx: DoctorContext, m: Machine, ev: MachineEvidence): Finding[] {
  if (m.role !== 'worker') return [];
  const want = ctx.rendered[m.hostname] ?? {};
  const fix = stepsFix(ctx, ['containerd'], m.hostname);
  return Object.keys(want).filter((p) => p === WORKER.containerdConfig || p.startsWith(`${WORKER.containerdCertsDir}/`)).flatMap((path): Finding[] => {
    if (!(path in ev.files) || ev.files[path] === want[path]) return [];
    const missing = ev.files[path] === null;
    if (path === WORKER.containerdConfig) {
      return [{ machine: m.hostname, check: 'containerd', fix, cause: `containerd's config on ${m.hostname} ${missing ? 'is missing' : 'differs from what hardway installs'}`, evidence: `${path}: ${missing ? 'No such file or directory' : 'sha256 differs from the rendered file'}` }];
    }
    const registry = path.slice(WORKER.containerdCertsDir.length + 1).split('/')[0]!;
    return [{
      machine: m.hostname, check: 'registry', fix,
      cause: missing
        ? `${path} is missing on ${m.hostname}: images of ${registry.replace(/_(\d+)_$/, ':$1')} are pulled without its mirrors (an image already in the node's cache still starts, which hides it)`
        : `${path} on ${m.hostname} differs from cluster.yaml's registries: pulls there use other mirrors`,
      evidence: `${path}: ${missing ? 'No such file or directory' : 'sha256 differs from the rendered file'}`,
    }];
  });
}

/**
 * Test pulls that failed. Explained by a registry file finding: told in its evidence (with the trap,
 * when the node has the image cached). Unexplained: a finding of its own.
 */
export function pullFindings(ctx: DoctorContext, m: Machine, ev: MachineEvidence, fileFindings: Finding[]): Finding[] {
  if (m.role !== 'worker') return [];
  const cached = new Set(parseImageList(ev.probes[CACHED_PROBE]?.stdout ?? '').keys());
  const cause = fileFindings.find((f) => f.check === 'registry') ?? fileFindings.find((f) => f.check === 'containerd');
  return ctx.testImages.flatMap((image): Finding[] => {
    const r = ev.probes[pullProbe(image)];
    if (!r || r.code === 0) return [];
    const last = r.stdout.trim().split('\n').filter(Boolean).pop() ?? `exit ${r.code}`;
    const trap = cached.has(image) ? ` (${image} is in ${m.hostname}'s image cache: pods with imagePullPolicy IfNotPresent still start, which hides this)` : '';
    const evidence = `ctr content fetch-object --hosts-dir ${WORKER.containerdCertsDir} ${image}: ${last}${trap}`;
    if (cause) {
      cause.evidence += `; ${evidence}`;
      return [];
    }
    // The lab's own registry machine stopped: starting it is the fix.
    const registryDown = ctx.lab?.registry && !ctx.lab.running.includes(REGISTRY_HOSTNAME);
    return [{
      machine: m.hostname, check: 'pull', evidence,
      fix: registryDown ? labMachineLine('start', REGISTRY_HOSTNAME, ctx.lab!.name) : null,
      cause: registryDown
        ? `pulling ${image} on ${m.hostname} fails: the lab's registry machine is not running`
        : `pulling ${image} on ${m.hostname} fails though its hosts.toml is as cluster.yaml says: is the registry up, and does it hold the image?`,
    }];
  });
}
