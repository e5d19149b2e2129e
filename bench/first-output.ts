// npm run bench:first-output -- how long a person waits, from starting `hardway up` against machines
// that do not answer, until the screen shows the step and a line for every machine being reached,
// the first retry, and the end. The target (the first step and every machine within 1 s) is about
// the first two. The machines are on a loopback port where nothing listens (127.0.0.9:9): nothing
// leaves this host, and every connection is refused at once.
//
//   npm run bench:first-output                 5 runs of `up` and of `pin-hosts` on 3 machines
//   npm run bench:first-output -- --runs 9 --machines 30
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cliLoader, HARDWAY } from './support/run.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, machines: { type: 'string', default: '3' } } });
const RUNS = Number(values.runs);
const MACHINES = Number(values.machines);
const KEY = new URL('../test/fixtures/ssh/client_ed25519', import.meta.url).pathname;
const TARGET_S = 1;

/** A project of one server and MACHINES-1 workers, every one reached at 127.0.0.9:9. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hw-bench-first-'));
  const lines = ['10.240.0.10 server.kubernetes.local server'];
  for (let i = 0; i < MACHINES - 1; i++) lines.push(`10.240.0.${20 + i} node-${i}.kubernetes.local node-${i} 10.200.${i}.0/24`);
  writeFileSync(join(dir, 'machines.txt'), lines.join('\n') + '\n');
  writeFileSync(join(dir, 'cluster.yaml'), 'keyAlgorithm: ecdsa-p256\nssh:\n  configFile: ssh_config\n');
  writeFileSync(join(dir, 'ssh_config'), 'Host *\n  HostName 127.0.0.9\n  Port 9\n');
  return dir;
}

/** Seconds from spawn to: the step's header, a line for every machine being reached, the first retry, the exit. */
interface Times {
  header: number;
  reached: number;
  retry: number;
  end: number;
}

/** Runs one command (stdout a pipe: the plain lines a log or CI sees, which come the moment they are written). */
function once(args: string[]): Promise<Times> {
  const dir = project();
  const t0 = performance.now();
  const at = () => (performance.now() - t0) / 1000;
  const times: Partial<Times> = {};
  const reached = new Set<string>();
  let buffered = '';
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [HARDWAY, ...args, '-i', KEY], { cwd: dir, env: { ...process.env, CI: '' }, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        if (times.header === undefined && line.startsWith('==> ')) times.header = at();
        const m = /^(\S+): connecting to /.exec(line);
        if (m) reached.add(m[1]!);
        if (times.reached === undefined && reached.size === MACHINES) times.reached = at();
        if (times.retry === undefined && /: no answer \(.*\), retry 2 of /.test(line)) times.retry = at();
      }
    });
    child.on('error', fail);
    child.on('close', () => {
      times.end = at();
      if (times.header === undefined || times.reached === undefined || times.retry === undefined) fail(new Error(`hardway ${args.join(' ')} did not show what it should: ${JSON.stringify(times)}`));
      else done(times as Times);
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (s: number) => `${s.toFixed(2)} s`;

console.log(`bench:first-output: ${RUNS} runs each, ${MACHINES} machines at 127.0.0.9:9 (refused); CLI from ${cliLoader()}; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
for (const args of [['up'], ['pin-hosts']]) {
  const runs: Times[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await once(args));
  const col = (k: keyof Times) => runs.map((r) => r[k]);
  console.log(`hardway ${args.join(' ')}:`);
  for (const [k, what] of [['header', 'the first step'], ['reached', 'a line for every machine'], ['retry', 'the first retry'], ['end', 'the end']] as const) {
    console.log(`  ${what.padEnd(26)} median ${fmt(median(col(k)))}  (${col(k).map(fmt).join(', ')})`);
  }
  const worst = Math.max(...col('reached'));
  console.log(`  target: the first step and every machine within ${TARGET_S} s: ${worst <= TARGET_S ? 'met' : 'missed'} (slowest run ${fmt(worst)})`);
}
