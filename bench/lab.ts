// npm run bench:lab -- time `hardway lab up` of 3 and of 16 machines from a warm root-filesystem
// cache (up = until every machine answers over SSH with its recorded host key), and `lab down`,
// against the targets: 3 machines in under 30 s, 16 in under 90 s.
//
//   npm run bench:lab                  both sizes, one run each
//   npm run bench:lab -- --runs 3      three runs of each size; the median is compared to the target
//
// Needs root. Uses lab "bench" on 10.240.60.0/24 and takes it down afterwards, also on failure.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { defaultLabPaths } from '../src/lab/names.ts';
import { ensureRootfs, rootfsPath } from '../src/lab/rootfs.ts';
import { existsSync } from 'node:fs';

const run = promisify(execFile);
const HARDWAY = new URL('../bin/hardway.mjs', import.meta.url).pathname;
const NAME = 'bench';
const SUBNET = '10.240.60.0/24';
const SCENARIOS = [
  { machines: 3, servers: 1, workers: 2, targetSeconds: 30 },
  { machines: 16, servers: 1, workers: 15, targetSeconds: 90 },
];

async function hardway(args: string[]): Promise<number> {
  const t0 = performance.now();
  await run(process.execPath, [HARDWAY, ...args], { env: { ...process.env, CI: 'true' }, maxBuffer: 64 << 20 });
  return (performance.now() - t0) / 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '1' } } });
  const runs = Math.max(1, Number(values.runs));
  if (process.getuid?.() !== 0) throw new Error('bench:lab needs root (systemd-nspawn, mounts, a bridge)');
  const cache = defaultLabPaths(process.env).cacheRoot;
  if (!existsSync(rootfsPath(cache))) {
    console.log('warming the cache: building the root filesystem once (not timed) ...');
    await ensureRootfs(cache, (l) => console.log(`  ${l}`));
  }
  console.log(`host: ${cpus().length} cores, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}; warm cache ${rootfsPath(cache)}`);
  await hardway(['lab', 'down', '--name', NAME, '--yes']);
  const dir = mkdtempSync(join(tmpdir(), 'hardway-bench-'));
  const rows: string[] = [];
  let failed = false;
  try {
    for (const s of SCENARIOS) {
      const ups: number[] = [];
      const downs: number[] = [];
      for (let i = 0; i < runs; i++) {
        ups.push(await hardway(['lab', 'up', '--name', NAME, '--subnet', SUBNET, '--servers', String(s.servers),
          '--workers', String(s.workers), '--dir', dir]));
        downs.push(await hardway(['lab', 'down', '--name', NAME, '--yes']));
      }
      const up = median(ups);
      const ok = up < s.targetSeconds;
      failed ||= !ok;
      rows.push(`${String(s.machines).padStart(2)} machines  up ${up.toFixed(1).padStart(5)} s (target < ${s.targetSeconds} s: ${ok ? 'met' : 'MISSED'})` +
        `  down ${median(downs).toFixed(1).padStart(4)} s  runs: ${ups.map((u) => u.toFixed(1)).join(', ')}`);
      console.log(rows.at(-1));
    }
  } finally {
    await hardway(['lab', 'down', '--name', NAME, '--yes']).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
  process.exitCode = failed ? 1 : 0;
}

await main();
