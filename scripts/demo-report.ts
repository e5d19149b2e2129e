// The demo's closing report: from `hardway up --json` and `hardway smoke --json`, which steps run
// on which machines, what failed and why, the nodes as the API sees them (`kubectl get nodes -o
// wide` with the jumpbox kubeconfig), and what next.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadInventory } from '../src/inventory.ts';

interface Result {
  step: string;
  machine: string;
  status: 'changed' | 'unchanged' | 'failed' | 'skipped';
  error?: string;
}

const [file, smokeFile, dir] = process.argv.slice(2) as [string, string, string];
const up = JSON.parse(readFileSync(file, 'utf8')) as { ok: boolean; results: Result[] };
const smoke = JSON.parse(readFileSync(smokeFile, 'utf8')) as { ok: boolean; results: Result[] };
const run = { ok: up.ok && smoke.ok, results: [...up.results, ...smoke.results] };
const steps = [...new Set(run.results.map((r) => r.step))];
const line = (s: string) => process.stdout.write(s + '\n');

line('');
line('What runs on the lab:');
for (const step of steps) {
  const rs = run.results.filter((r) => r.step === step);
  const good = rs.filter((r) => r.status === 'changed' || r.status === 'unchanged').map((r) => r.machine);
  const bad = rs.filter((r) => r.status === 'failed' || r.status === 'skipped');
  const mark = bad.length === 0 ? 'ok     ' : good.length ? 'partly ' : 'missing';
  line(`  ${mark} ${step.padEnd(24)} ${good.length ? good.join(', ') : ''}`);
  // A verify failure lists its problems on the lines after the first: show them too.
  const reasons = bad.flatMap((r) => (r.error ?? '').split('\n').filter((l) => l.trim() && !l.trim().startsWith('hint:')).map((l) => l.trim()));
  for (const reason of new Set(reasons)) line(`            ${reason}`);
}
line('');
// This host does not resolve the lab's names, so kubectl is pointed at the server's address (the
// API server's certificate carries it).
const inventory = loadInventory(join(dir, 'machines.txt'));
const server = inventory.controlPlanes[0]!;
const kubectl = ['--kubeconfig', join(dir, 'pki/jumpbox.kubeconfig'), `--server=https://${server.ip}:6443`, '--request-timeout=10s'];
line(`$ kubectl --kubeconfig pki/jumpbox.kubeconfig --server=https://${server.ip}:6443 get nodes -o wide`);
const nodes = spawnSync('kubectl', [...kubectl, 'get', 'nodes', '-o', 'wide'], { encoding: 'utf8' });
line((nodes.stdout || nodes.stderr || String(nodes.error)).trimEnd());
line('');
// A name resolved in a pod, by the cluster's DNS (CoreDNS behind the kube-dns Service).
if (inventory.settings.dns.enabled && smoke.ok) {
  const name = `hardway-smoke.default.svc.${inventory.settings.clusterDomain}`;
  line(`$ kubectl exec deploy/hardway-smoke -- nslookup ${name}`);
  const lookup = spawnSync('kubectl', [...kubectl, 'exec', 'deploy/hardway-smoke', '--', 'nslookup', name], { encoding: 'utf8' });
  line((lookup.stdout || lookup.stderr || String(lookup.error)).trimEnd());
  line('');
}
if (run.ok) {
  line('The whole cluster is up and the smoke test passed (secret encrypted, pod, logs, exec, port-forward, NodePort, names in pods).');
} else {
  line('Not everything could run: see the reasons above. Fix the cause and rerun; every step keeps what is right.');
}
// hardway is on PATH only once the user put it there (README: "Put hardway on your PATH").
const onPath = spawnSync('sh', ['-c', 'command -v hardway'], { encoding: 'utf8' }).status === 0;
const root = new URL('..', import.meta.url).pathname;
if (!onPath) line(`hardway is not on your PATH yet: run "npm link" in ${root} once (or use "node ${root}bin/hardway.mjs" for "hardway").`);
line(`Look around: cd ${dir} && hardway lab ssh node-0 --name demo   |   hardway verify   |   hardway lab down --name demo --yes`);
