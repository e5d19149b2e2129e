// hardway lab break without a lab: the scenario table (and its rows in the docs), the pure parts of
// two scenarios (the hosts block removed from a template, the expired kubelet certificate), and the
// CLI's usage errors.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadInventory } from '../../src/inventory.ts';
import { HOSTS_MARKERS } from '../../src/layout.ts';
import { expiredKubelet } from '../../src/break/expired-cert.ts';
import { SCENARIOS, withoutBlock, scenarioFix } from '../../src/break/scenarios.ts';
import { defaultMachine } from '../../src/break/run.ts';
import { CHECKS } from '../../src/doctor/checks/index.ts';
import { runCli } from '../helpers/cli.ts';
import { makeProject } from './certs.helpers.ts';
import { DOCTOR_FIXTURES } from './doctor.helpers.ts';

/** The 1-server 2-worker lab doctor's evidence was recorded on (server, node-0, node-1). */
const LAB = loadInventory(join(DOCTOR_FIXTURES, 'project/machines.txt'));

/** The rows of a document's `hardway lab break ...` table: the scenario, whether it says it needs the registry, and doctor's fix. */
function scenarioRows(doc: string): { name: string; registry: boolean; fix: string }[] {
  const text = readFileSync(join(import.meta.dirname, '../..', doc), 'utf8');
  const table = text.slice(text.indexOf('| `hardway lab break ...` |')).split('\n\n')[0]!;
  return table.split('\n').slice(2).map((row) => {
    const m = /^\| `([a-z-]+)`( \(`lab up --registry`\))? \|.*\| `([^`]+)` \|$/.exec(row);
    if (!m) throw new Error(`${doc}: not a scenario row: ${row}`);
    return { name: m[1]!, registry: Boolean(m[2]), fix: m[3]! };
  });
}

describe('lab break', () => {
  it('every scenario has a name of its own, a doctor check, a fix that is a hardway command, and a machine of the 1+2 lab it can break', () => {
    const names = SCENARIOS.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    for (const s of SCENARIOS) {
      expect(s.name).toMatch(/^[a-z]+(-[a-z]+)*$/);
      expect(CHECKS).toContain(s.doctor.check);
      expect(scenarioFix(s, s.labMachine, 'dev')).toMatch(/^hardway [a-z-]+ /);
      expect(s.roles, s.name).toContain(LAB.machines.find((m) => m.hostname === s.labMachine)?.role);
    }
  });

  it("docs/troubleshooting.md has a row of every scenario, in --list's order, with the fix doctor prints after `lab break NAME` (its default machine); the README's rows are some of them", () => {
    const expected = SCENARIOS.map((s) => ({ name: s.name, registry: Boolean(s.registry), fix: scenarioFix(s, defaultMachine(s, LAB.machines)!.hostname, 'LAB') }));
    expect(scenarioRows('docs/troubleshooting.md')).toEqual(expected);
    const readme = scenarioRows('README.md');
    expect(readme.length).toBeGreaterThan(0);
    expect(expected.filter((row) => readme.some((r) => r.name === row.name))).toEqual(readme);
  });

  it('hosts-drift removes exactly hardway\'s block from a template', () => {
    const template = `## template:jinja\n127.0.0.1 localhost\n${HOSTS_MARKERS.begin}\n10.0.0.1 a.x a\n${HOSTS_MARKERS.end}\n::1 ip6-localhost\n`;
    expect(withoutBlock(template)).toBe('## template:jinja\n127.0.0.1 localhost\n::1 ip6-localhost\n');
    expect(withoutBlock('no block\n')).toBe('no block\n');
  });

  it('cert-expired: the kubelet leaf reissued by the project\'s CA, same subject and key, expired yesterday, embedded in its kubeconfig', async () => {
    // ECDSA keys: RSA-4096 generation takes tens of seconds on a busy shared host.
    const { dir, machines } = makeProject({ cluster: 'keyAlgorithm: ecdsa-p256\n' });
    expect((await runCli(['certs'], dir)).code).toBe(0);
    const inv = loadInventory(machines);
    const pki = (p: string) => readFileSync(join(dir, p), 'utf8');
    const now = new Date();
    const { certPem, kubeconfig } = expiredKubelet(inv, 'node-1', { caPem: pki('pki/ca.crt'), caKeyPem: pki('pki/ca.key'), keyPem: pki('pki/machines/node-1/kubelet.key') }, now);
    const cert = new X509Certificate(certPem);
    const real = new X509Certificate(pki('pki/machines/node-1/kubelet.crt'));
    expect(Date.parse(cert.validTo)).toBeLessThan(now.getTime() - 12 * 3600_000);
    expect(cert.verify(new X509Certificate(pki('pki/ca.crt')).publicKey)).toBe(true);
    expect(cert.subject).toBe(real.subject);
    expect(cert.subjectAltName).toBe(real.subjectAltName);
    expect(cert.publicKey.export({ format: 'der', type: 'spki' })).toEqual(real.publicKey.export({ format: 'der', type: 'spki' }));
    const kc = parse(kubeconfig) as { users: { user: Record<string, string> }[]; clusters: { cluster: { server: string } }[] };
    expect(Buffer.from(kc.users[0]!.user['client-certificate-data']!, 'base64').toString()).toBe(certPem);
    expect(kc.clusters[0]!.cluster.server).toBe('https://server.kubernetes.local:6443');
  });

  it('--list says what each scenario breaks and what a learner sees; usage errors exit 2 with a hint', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'hardway-break-'));
    const list = await runCli(['lab', 'break', '--list'], cwd);
    expect(list.code).toBe(0);
    for (const s of SCENARIOS) expect(list.stdout).toContain(`${s.name}${s.registry ? ' (needs lab up --registry)' : ''}\n  breaks: ${s.breaks}\n  you see: ${s.sees}`);
    for (const [args, message] of [
      [['lab', 'break'], 'lab break takes exactly one SCENARIO'],
      [['lab', 'break', 'a', 'b'], 'lab break takes exactly one SCENARIO'],
      [['lab', 'break', 'meltdown'], 'unknown scenario "meltdown"'],
      [['lab', 'break', '--list', 'worker-down'], '--list takes no SCENARIO'],
      [['lab', 'break', 'worker-down', '--nod', 'x'], 'error: unknown option --nod for "hardway lab break"\n  hint: did you mean --node?'],
      [['lab', 'break', 'worker-dwn'], 'hint: did you mean "worker-down"?'],
    ] as const) {
      const r = await runCli([...args], cwd);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});

describe('lab break needs --yes', () => {
  it('without --yes: refused (exit 2) before anything is read, saying what it would break and the line to run with --yes or --dry-run', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'hardway-break-'));
    const r = await runCli(['lab', 'break', 'hosts-drift', '--node', 'node-1'], cwd, { ...process.env, SUDO_USER: 'ann' });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const hostsDrift = SCENARIOS.find((s) => s.name === 'hosts-drift')!;
    expect(r.stderr).toBe(
      `error: "hardway lab break" would break node-1 of the lab on purpose (hosts-drift): ${hostsDrift.breaks}; only the fix "hardway doctor" names undoes it; it runs only with --yes\n` +
        '  hint: run it again with --yes to do it: sudo hardway lab break hosts-drift --node node-1 --yes\n' +
        '        or with --dry-run to see what it would do: sudo hardway lab break hosts-drift --node node-1 --dry-run\n',
    );
    const both = await runCli(['lab', 'break', 'hosts-drift', '--yes', '--dry-run'], cwd);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--dry-run and --yes together');
  });
});

describe('doctor usage errors', () => {
  it('exits 2 with a hint, no stack trace: no machines.txt, a bad --pull-image, the old --image, an unknown option', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'hardway-doctor-'));
    const none = await runCli(['doctor'], cwd);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('machines.txt');
    const { dir } = makeProject();
    for (const [args, message] of [
      [['doctor', '--pull-image', 'a b'], '--pull-image "a b" is not an image reference'],
      [['doctor', '--image', 'x'], 'error: --image is now --pull-image for "hardway doctor"\n  hint: --pull-image IMAGE: test-pull this image'],
      [['doctor', '--fast'], 'error: unknown option --fast for "hardway doctor"'],
    ] as const) {
      const r = await runCli([...args], dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
