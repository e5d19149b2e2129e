// A project whose steps can plan on the fake Debian machine: stand-in binaries in downloads/ and a
// whole pki/ (ECDSA keys: fast to make), and a step's plan on the fake with every write refused.
// Used by the step plan tests and the reset tests.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureCertificates } from '../../src/certs/ensure.ts';
import { parseClusterSettings } from '../../src/cluster-settings.ts';
import { writeEncryptionConfig } from '../../src/certs/write-encryption-config.ts';
import { writeKubeconfigs } from '../../src/certs/write-kubeconfigs.ts';
import { createFacts } from '../../src/engine/facts.ts';
import type { Change, ChangeStep, StepOptions } from '../../src/engine/types.ts';
import { parseInventory, type Inventory, type Machine } from '../../src/inventory.ts';
import { BINARY_DIRS, REQUIRED_CNI_PLUGINS } from '../../src/download/layout.ts';
import type { debianMachine } from '../fixtures/debian-machine.ts';
import { MACHINES, projectDir, stepOptions } from './engine.helpers.ts';

/** A project with stand-in binaries in downloads/ and a whole pki/ (ECDSA keys: fast to make). */
export async function project(machines = MACHINES): Promise<Inventory> {
  const dir = projectDir();
  const yaml = 'keyAlgorithm: ecdsa-p256\n';
  writeFileSync(join(dir, 'cluster.yaml'), yaml);
  const bin = (rel: string) => {
    mkdirSync(join(dir, 'downloads', rel, '..'), { recursive: true });
    writeFileSync(join(dir, 'downloads', rel), `#!/bin/sh\n# ${rel} stand-in\n`);
    chmodSync(join(dir, 'downloads', rel), 0o755);
  };
  for (const [name, sub] of Object.entries(BINARY_DIRS)) if (name !== 'crictl') bin(`${sub}/${name}`);
  for (const p of REQUIRED_CNI_PLUGINS) bin(`cni-plugins/${p}`);
  const inv = parseInventory(machines, parseClusterSettings(yaml, join(dir, 'cluster.yaml')), { file: join(dir, 'machines.txt'), dir, clusterFile: join(dir, 'cluster.yaml') });
  await ensureCertificates(inv, new Date());
  writeKubeconfigs(inv);
  writeEncryptionConfig(inv);
  return inv;
}

/** The step's plan on the fake machine, with every write refused. */
export async function planOn(step: ChangeStep, inv: Inventory, machine: Machine, t: ReturnType<typeof debianMachine>, options: StepOptions = stepOptions()): Promise<Change[]> {
  t.planning = true;
  try {
    const log = { info: () => undefined, debug: () => undefined };
    return await step.plan({ host: machine.hostname, machine, inventory: inv, facts: createFacts(t), options, log });
  } finally {
    t.planning = false;
  }
}

