import { defineConfig } from 'vitest/config';

// Two suites, both run by `npm test`: fast unit tests, and end-to-end tests on real lab machines
// (systemd-nspawn, sshd, cloud-init), which run one file at a time because they share the host.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 600_000,
          // A fresh machine builds the lab's root (debootstrap) and Kubernetes (Debian's source) in a beforeAll.
          hookTimeout: 2_400_000,
        },
      },
    ],
  },
});
