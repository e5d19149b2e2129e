// containerd and registries: containerd's unit and config, each hosts.toml against what hardway
// renders, and a test pull through the mirrors that never looks at the node's image cache. Pure.
import type { Machine } from '../../inventory.ts';
import { WORKER } from '../../layout.ts';
import { images, parseImageList, testPull } from '../../probes/containerd.ts';
import { REGISTRY_HOSTNAME } from '../../lab/registry.ts';
import { labFix, stepsFix } from '../fixes.ts';
import { CACHED_PROBE, pullProbe } from '../probes.ts';
import type { DoctorContext, MachineEvidence } from '../types.ts';
import { doctorCheck, sameMachine, stdoutOf, type Found } from './check.ts';
import { serviceDown, serviceProbes } from './machine.ts';

/** The registry files hardway renders for `m` that are of this kind: containerd's config, or certs.d's. */
function renderedOf(ctx: DoctorContext, m: Machine, files: MachineEvidence['files'], config: boolean): string[] {
  if (m.role !== 'worker') return [];
  const want = ctx.rendered[m.hostname] ?? {};
  return Object.keys(want).filter((p) => (config ? p === WORKER.containerdConfig : p.startsWith(`${WORKER.containerdCertsDir}/`)))
    .filter((p) => p in files && files[p] !== want[p]);
}

/** containerd not active on a worker (and the kubelet that stopped with it), or its config missing or other than hardway's. */
export const containerd = doctorCheck({
  name: 'containerd',
  rank: 60,
  looks: 'containerd is active on each worker and its config is the one hardway installs',
  asks: serviceProbes,
  reads: ({ machine, rendered }) => (machine.role === 'worker' ? rendered.filter((p) => p === WORKER.containerdConfig) : []),
  judge: ({ ctx, machine: m, answers, files }): Found[] => [
    ...(m.role === 'worker' ? serviceDown(m, 'containerd', answers) : []),
    ...renderedOf(ctx, m, files, true).map((path): Found => {
      const missing = files[path] === null;
      return { machine: m.hostname, fix: stepsFix(['containerd'], m.hostname), about: { kind: 'config' },
        cause: `containerd's config on ${m.hostname} ${missing ? 'is missing' : 'differs from what hardway installs'}`, evidence: `${path}: ${missing ? 'No such file or directory' : 'sha256 differs from the rendered file'}` };
    }),
  ],
  explains: {
    node: sameMachine,
    // Its config explains a failed test pull there, after a hosts.toml finding there (the nearer cause).
    pull: (mine, theirs) => (mine.machine === theirs.machine && mine.about?.kind === 'config' ? 1 : false),
  },
});

/** Every certs.d file of cluster.yaml's registries, missing or different. */
export const registry = doctorCheck({
  name: 'registry',
  rank: 170,
  looks: "each worker's hosts.toml files (/etc/containerd/certs.d) are the ones cluster.yaml's registries make",
  reads: ({ machine, rendered }) => (machine.role === 'worker' ? rendered.filter((p) => p.startsWith(`${WORKER.containerdCertsDir}/`)) : []),
  judge: ({ ctx, machine: m, files }) => renderedOf(ctx, m, files, false).map((path): Found => {
    const missing = files[path] === null;
    const name = path.slice(WORKER.containerdCertsDir.length + 1).split('/')[0]!;
    return {
      machine: m.hostname, fix: stepsFix(['containerd'], m.hostname),
      cause: missing
        ? `${path} is missing on ${m.hostname}: images of ${name.replace(/_(\d+)_$/, ':$1')} are pulled without its mirrors (an image already in the node's cache still starts, which hides it)`
        : `${path} on ${m.hostname} differs from cluster.yaml's registries: pulls there use other mirrors`,
      evidence: `${path}: ${missing ? 'No such file or directory' : 'sha256 differs from the rendered file'}`,
    };
  }),
  explains: { pull: sameMachine },
});

/**
 * Test pulls that failed, each a finding (a registry file finding on the machine tells it in its
 * evidence instead, with the trap when the node has the image cached). Asked once the images are
 * known: a fetch from the registry itself, never from the node's image cache (a cached image hides
 * a broken mirror from every IfNotPresent pull); the manifest goes to /dev/null, nothing is stored.
 */
export const pull = doctorCheck({
  name: 'pull',
  rank: 180,
  looks: "a test pull on each worker through the mirrors (ctr content fetch-object), never from the node's image cache: a cached image hides a broken mirror",
  later: true,
  asks: ({ machine, testImages }) => (machine.role !== 'worker' || testImages.length === 0 ? {} : {
    ...Object.fromEntries(testImages.map((image) => [pullProbe(image), testPull.ask(image)])),
    // What the node has cached, to tell when a cached image hides a broken pull.
    [CACHED_PROBE]: images.ask(testImages),
  }),
  judge: ({ ctx, machine: m, answers }): Found[] => {
    if (m.role !== 'worker') return [];
    const a = answers as Record<string, { code: number; stdout: string } | undefined>;
    const cached = new Set(parseImageList(stdoutOf(a[CACHED_PROBE])).keys());
    return ctx.testImages.flatMap((image): Found[] => {
      const r = a[pullProbe(image)];
      if (!r || r.code === 0) return [];
      const last = r.stdout.trim().split('\n').filter(Boolean).pop() ?? `exit ${r.code}`;
      const trap = cached.has(image) ? ` (${image} is in ${m.hostname}'s image cache: pods with imagePullPolicy IfNotPresent still start, which hides this)` : '';
      const evidence = `ctr content fetch-object --hosts-dir ${WORKER.containerdCertsDir} ${image}: ${last}${trap}`;
      // The lab's own registry machine stopped: starting it is the fix.
      const registryDown = ctx.lab?.registry && !ctx.lab.running.includes(REGISTRY_HOSTNAME);
      return [{
        machine: m.hostname, evidence,
        fix: registryDown ? labFix('start', REGISTRY_HOSTNAME, ctx.lab!.name) : null,
        cause: registryDown
          ? `pulling ${image} on ${m.hostname} fails: the lab's registry machine is not running`
          : `pulling ${image} on ${m.hostname} fails though its hosts.toml is as cluster.yaml says: is the registry up, and does it hold the image?`,
      }];
    });
  },
});
