import { defineConfig } from 'vitest/config';

// Two suites, both run by `npm test`: the unit tests first, on every core; then the end-to-end tests
// on real lab machines (systemd-nspawn, sshd, cloud-init, the real Kubernetes binaries), one file at
// a time in the order of test/support/e2e-order.ts, the kill test among them. The cluster suites
// share one lab cluster (test/e2e/helpers/shared-lab.ts), which the global setup takes down at the
// end. The reporter prints each file's time; test/e2e/budget.test.ts fails a run over its budget.
export default defineConfig({
  test: {
    reporters: ['default', './test/support/suite-times.ts'],
    sequence: { sequencer: (await import('./test/support/e2e-order.ts')).default },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          setupFiles: ['./test/support/no-node-warnings.ts'],
          testTimeout: 60_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts', 'test/e2e-kill/**/*.test.ts'],
          setupFiles: ['./test/support/no-node-warnings.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 1, sequencer: (await import('./test/support/e2e-order.ts')).default },
          globalSetup: ['./test/e2e/helpers/global-setup.ts'],
          testTimeout: 600_000,
          // A fresh machine builds the lab's root (debootstrap) and Kubernetes (Debian's source) in a beforeAll.
          hookTimeout: 2_400_000,
        },
      },
    ],
  },
});
