/**
 * The order of the end-to-end files (a vitest sequencer): the suites with labs of their own first,
 * then the 3+2 control-plane suite, then the suites that take turns on the shared 1+2 cluster
 * (test/e2e/helpers/shared-lab.ts) in the order their state needs, and the budget check last.
 * Only one cluster is up at a time, and the shared one is booted once.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The e2e files in the order they run; a file not listed runs before the shared cluster's suites. */
export const E2E_ORDER = [
  // Labs of their own (small, no cluster or stand-ins), then the full clusters of their own.
  'test/e2e/lab-limits.test.ts', // first: it needs the host's limit as no other lab holds it
  'test/e2e/lab.test.ts',
  'test/e2e/transport.test.ts',
  'test/e2e/pin-hosts.test.ts',
  'test/e2e/engine-faults.test.ts',
  'test/e2e/registry.test.ts',
  'test/e2e/build-images.test.ts',
  'test/e2e/download-debian.test.ts',
  'test/e2e/multipass.test.ts',
  'test/e2e/ha.test.ts', // the 3+2 cluster
  // The shared 1+2 cluster, in turns. day-two first: it needs machines hardway never touched, and
  // proves that reset gives them back, which is how the next suite that needs fresh machines gets them.
  'test/e2e/day-two.test.ts',
  'test/e2e/cluster.test.ts',
  'test/e2e/sudo.test.ts', // what is particular to the shared lab's sudo login, on the converged cluster
  'test/e2e/doctor.test.ts',
  'test/e2e/etcd-snapshot.test.ts',
  'test/e2e/encryption-rotation.test.ts', // leaves the new key in place: the cluster stays usable
  'test/e2e/certs-rotation.test.ts',
  'test/e2e-kill/interrupt.test.ts',
  // Last: the run's own time against its budget.
  'test/e2e/budget.test.ts',
];

/** Unit files as vitest orders them; then the e2e files in E2E_ORDER (unlisted ones before the shared cluster's). */
export default class E2eOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      if (f.project.name !== 'e2e') return -1;
      const i = E2E_ORDER.indexOf(relative(f.project.config.root, f.moduleId));
      return i >= 0 ? i : E2E_ORDER.indexOf('test/e2e/ha.test.ts') + 0.5;
    };
    // Array.prototype.sort is stable: unit files keep vitest's order among themselves.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
