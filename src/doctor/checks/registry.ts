// Registries: containerd's config and each hosts.toml against what hardway renders, and a test pull
// through the mirrors that never looks at the node's image cache. Pure.
import type { Machine } from '../../inventory.ts';
import { WORKER } from '../../layout.ts';
import { workerStepFix } from '../fixes.ts';
import { pullProbe } from '../probes.ts';
import type { DoctorContext, Finding, MachineEvidence } from '../types.ts';

/** containerd's config and every certs.d file of cluster.yaml's registries, missing or different. */
export function registryFileFindings(ctx: DoctorContext, m: Machine, ev: MachineEvidence): Finding[] {
  if (m.role !== 'worker') return [];
  const want = ctx.rendered[m.hostname] ?? {};
  const fix = workerStepFix(ctx, 'containerd', m.hostname);
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

/** Test pulls that failed: the registry could not be reached the way a pod's pull goes. */
export function pullFindings(ctx: DoctorContext, m: Machine, ev: MachineEvidence, fileFindings: Finding[]): Finding[] {
  if (m.role !== 'worker') return [];
  return ctx.testImages.flatMap((image): Finding[] => {
    const r = ev.probes[pullProbe(image)];
    if (!r || r.code === 0) return [];
    const last = r.stdout.trim().split('\n').filter(Boolean).pop() ?? `exit ${r.code}`;
    // A hosts.toml problem found above explains the failure; its fix is then this one's too.
    const fix = fileFindings.some((f) => f.check === 'registry' || f.check === 'containerd') ? workerStepFix(ctx, 'containerd', m.hostname) : null;
    const hint = fix ? '' : ' (the mirrors in hosts.toml are as cluster.yaml says: is the registry up and does it hold the image?)';
    return [{
      machine: m.hostname, check: 'pull', fix,
      cause: `pulling ${image} on ${m.hostname} fails: a pod that needs it there (a new image, or imagePullPolicy Always) gets ErrImagePull${hint}`,
      evidence: `ctr content fetch-object --hosts-dir ${WORKER.containerdCertsDir} ${image}: ${last}`,
    }];
  });
}
