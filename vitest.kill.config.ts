import { defineConfig } from 'vitest/config';

// `npm run test:kill`: the kill test (test/e2e-kill), SIGKILL at 20 points of `hardway up` on a lab.
// Not part of `npm test` (vitest.config.ts): 10 to 20 minutes on a shared 2-core host, with its load;
// .ci/run runs it after `npm test`.
export default defineConfig({
  test: {
    name: 'kill',
    include: ['test/e2e-kill/**/*.test.ts'],
    fileParallelism: false,
    // One kill point: the killed run, the rerun, the next run and the checks.
    testTimeout: 600_000,
    // The lab, `download --source debian` (a fresh machine builds Kubernetes), build-images, the first up.
    hookTimeout: 2_400_000,
  },
});
