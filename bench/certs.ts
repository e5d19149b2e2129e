// npm run bench:certs -- time `hardway certs` against the KTHW procedure (an openssl CLI loop:
// key, request, signature per identity, one after the other) for the same identities and key type.
//
//   npm run bench:certs                      every scenario, every loop run in full
//   npm run bench:certs -- --sample 20       openssl loops of more than 20 identities are timed on
//                                            the first 20 and extrapolated (and marked so)
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { caIdentities, identitiesFor, type CaIdentity, type Identity } from '../src/certs/identities.ts';
import type { KeyAlgorithm } from '../src/cluster-settings.ts';
import { loadInventory } from '../src/inventory.ts';
import { cliLoader, HARDWAY } from './support/run.ts';

const run = promisify(execFile);

/** A cluster of 1 server and `workers` workers in the KTHW address plan. */
function machinesTxt(workers: number): string {
  const lines = ['10.240.0.10 server.kubernetes.local server'];
  for (let i = 0; i < workers; i++) {
    lines.push(`10.240.${1 + Math.floor(i / 200)}.${20 + (i % 200)} node-${i}.kubernetes.local node-${i} 10.200.${i}.0/24`);
  }
  return lines.join('\n') + '\n';
}

/** Wall time and the CPU time of waited-for child processes, read from /proc (Linux). */
function childCpuSeconds(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100; // cutime + cstime, in clock ticks (USER_HZ 100)
}

async function timed(fn: () => Promise<void>): Promise<{ wall: number; cpu: number }> {
  const cpu0 = childCpuSeconds();
  const t0 = performance.now();
  await fn();
  return { wall: (performance.now() - t0) / 1000, cpu: childCpuSeconds() - cpu0 };
}

/** `hardway certs` as a user runs it: the CLI, in a fresh project. */
async function hardwayCerts(dir: string): Promise<void> {
  await run(process.execPath, [HARDWAY, 'certs', '--machines', join(dir, 'machines.txt')], { maxBuffer: 1 << 24 });
}

/** The tutorial's file and section name of an identity: node-0, etcd-server-server (hardway's are node-0/kubelet, server/etcd-server). */
function flat(id: Identity | CaIdentity): string {
  return 'machine' in id && id.machine !== undefined ? (id.role === 'kubelet' ? id.machine : `etcd-server-${id.machine}`) : id.name;
}

/** The tutorial's openssl.cnf sections for one identity (subject, extensions), or a CA. */
function confSection(id: Identity | CaIdentity): string {
  const name = flat(id);
  const dn = [`CN = ${id.subject.CN}`, ...(id.subject.O ? [`O = ${id.subject.O}`] : [])].join('\n');
  const ext = 'issuer' in id
    ? ['basicConstraints = CA:FALSE', 'keyUsage = critical, digitalSignature, keyEncipherment',
      `extendedKeyUsage = ${id.usages.join(', ')}`, 'subjectKeyIdentifier = hash',
      ...(id.sans.length ? [`subjectAltName = ${id.sans.join(', ')}`] : [])]
    : ['basicConstraints = critical, CA:TRUE', 'keyUsage = critical, keyCertSign, cRLSign', 'subjectKeyIdentifier = hash'];
  return `[${name}]\nprompt = no\ndistinguished_name = ${name}_dn\nreq_extensions = ${name}_ext\nx509_extensions = ${name}_ext\n` +
    `[${name}_ext]\n${ext.join('\n')}\n[${name}_dn]\n${dn}\n`;
}

function genKeyArgs(algorithm: KeyAlgorithm, out: string): string[] {
  return algorithm === 'ecdsa-p256'
    ? ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', out]
    : ['genrsa', '-out', out, algorithm === 'rsa-2048' ? '2048' : '4096'];
}

/** The KTHW loop, sequential: CAs with `req -x509`, then per identity genrsa/genpkey, req, x509 -req. */
async function opensslLoop(dir: string, algorithm: KeyAlgorithm, leaves: Identity[]): Promise<void> {
  const conf = join(dir, 'ca.conf');
  writeFileSync(conf, [...caIdentities(), ...leaves].map(confSection).join('\n'));
  const o = (args: string[]) => run('openssl', args, { cwd: dir });
  for (const ca of caIdentities()) {
    await o(genKeyArgs(algorithm, `${ca.name}.key`));
    await o(['req', '-x509', '-new', '-sha512', '-noenc', '-key', `${ca.name}.key`, '-days', '3653',
      '-config', conf, '-section', ca.name, '-out', `${ca.name}.crt`]);
  }
  for (const id of leaves) {
    const name = flat(id);
    await o(genKeyArgs(algorithm, `${name}.key`));
    await o(['req', '-new', '-key', `${name}.key`, '-sha256', '-config', conf, '-section', name, '-out', `${name}.csr`]);
    await o(['x509', '-req', '-days', '3653', '-in', `${name}.csr`, '-copy_extensions', 'copyall', '-sha256',
      '-CA', `${id.issuer}.crt`, '-CAkey', `${id.issuer}.key`, '-CAcreateserial', '-out', `${name}.crt`]);
  }
}

interface Timing { wall: number; cpu: number }
interface Row { scenario: string; hardway: Timing; loop: Timing; reps: number; extrapolated?: string }

const best = (ts: Timing[]): Timing => ts.reduce((a, b) => (b.wall < a.wall ? b : a));

/**
 * One scenario, `reps` times, alternating which side goes first so that load from other work on the
 * host hits both alike; the best (lowest) wall time of each side is reported.
 */
async function scenario(workers: number, algorithm: KeyAlgorithm, reps: number, sample: number | undefined): Promise<Row> {
  const root = mkdtempSync(join(tmpdir(), 'hardway-bench-certs-'));
  try {
    writeFileSync(join(root, 'machines.txt'), machinesTxt(workers));
    writeFileSync(join(root, 'cluster.yaml'), `keyAlgorithm: ${algorithm}\n`);
    const leaves = identitiesFor(loadInventory(join(root, 'machines.txt')));
    const total = leaves.length + 2;
    const partial = sample !== undefined && total > sample;
    const factor = partial ? total / sample : 1;
    const hw: Timing[] = [];
    const loop: Timing[] = [];
    const sides = [
      async () => {
        rmSync(join(root, 'pki'), { recursive: true, force: true });
        hw.push(await timed(() => hardwayCerts(root)));
      },
      async () => {
        const dir = join(root, 'openssl');
        rmSync(dir, { recursive: true, force: true });
        mkdirSync(dir);
        const t = await timed(() => opensslLoop(dir, algorithm, partial ? leaves.slice(0, sample - 2) : leaves));
        loop.push({ wall: t.wall * factor, cpu: t.cpu * factor });
      },
    ];
    for (let r = 0; r < reps; r++) for (const side of r % 2 === 0 ? sides : [...sides].reverse()) await side();
    const name = `${workers === 2 ? 'example (1 server, 2 workers)' : `1 server, ${workers} workers`}, ${algorithm}, ${total} certs`;
    return {
      scenario: name, hardway: best(hw), loop: best(loop), reps,
      ...(partial ? { extrapolated: `${name}: openssl loop EXTRAPOLATED from ${sample} of ${total} certificates` } : {}),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { sample: { type: 'string' } } });
  const sample = values.sample === undefined ? undefined : Number(values.sample);
  // RSA-4096 for 100 workers takes minutes per side: measured once; the rest three times.
  const plan: [number, KeyAlgorithm, number][] = [[2, 'ecdsa-p256', 3], [2, 'rsa-4096', 3], [100, 'ecdsa-p256', 3], [100, 'rsa-4096', 1]];
  console.log(`bench:certs on ${process.version}, 2 cores shared with other work: load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const startup: Timing[] = [];
  for (let i = 0; i < 4; i++) startup.push(await timed(() => run(process.execPath, [HARDWAY, '--version']).then(() => undefined)));
  const rows: Row[] = [];
  for (const [workers, algorithm, reps] of plan) {
    const row = await scenario(workers, algorithm, reps, sample);
    rows.push(row);
    console.log(`  done: ${row.scenario}: hardway ${row.hardway.wall.toFixed(2)} s, openssl loop ${row.loop.wall.toFixed(2)} s (best of ${row.reps})`);
  }
  const head = ['scenario', 'hardway', 'openssl loop', 'ratio'];
  const cells = rows.map((r) => [
    r.scenario + (r.extrapolated ? ' (*)' : ''),
    `${r.hardway.wall.toFixed(2)} s (cpu ${r.hardway.cpu.toFixed(1)} s)`,
    `${r.loop.wall.toFixed(2)} s (cpu ${r.loop.cpu.toFixed(1)} s)`,
    `${(r.hardway.wall / r.loop.wall).toFixed(2)}x`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((x, i) => x.padEnd(widths[i]!)).join(' | ');
  console.log('');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const c of cells) console.log(line(c));
  console.log('');
  console.log('ratio = hardway wall time / openssl loop wall time (below 1: hardway is faster). Wall times include');
  console.log(`starting the hardway CLI (${cliLoader()}: ${best(startup.slice(1)).wall.toFixed(2)} s for "hardway --version") and every openssl process;`);
  console.log('cpu = user+sys of the child processes. Best of 3 runs (alternating order), RSA-4096 x 100 once.');
  for (const r of rows) if (r.extrapolated) console.log(`(*) ${r.extrapolated}`);
  console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}

await main();
