// The demo's closing report: from `hardway up --json`, which steps run on which machines, what
// failed and why (on a machine without internet: the Kubernetes server binaries), and what next.
import { readFileSync } from 'node:fs';

interface Result {
  step: string;
  machine: string;
  status: 'changed' | 'unchanged' | 'failed' | 'skipped';
  error?: string;
}

const [file, dir] = process.argv.slice(2) as [string, string];
const run = JSON.parse(readFileSync(file, 'utf8')) as { ok: boolean; results: Result[] };
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
if (run.ok) {
  line('The whole cluster is up. Try: kubectl --kubeconfig pki/jumpbox.kubeconfig get nodes');
} else {
  line('Not everything could run. Where binaries are missing, "hardway download --source release" on a');
  line('machine with internet access fetches the Kubernetes release files; then "hardway up" finishes.');
}
line(`Look around: cd ${dir} && hardway lab ssh node-0   |   hardway verify   |   hardway lab down --name demo`);
