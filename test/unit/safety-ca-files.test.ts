// Issue 24, second round, around the CA's files: --renew-ca refuses an unreadable CA before it
// writes anything (item 6 for the rotation), kubeconfigs' advice never leads to a new CA (items 6
// and 15), a CA key kept offline is a warning of certs check (item 15), and every message tells one
// CA rotation that works as typed (item 9).
import { X509Certificate } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rotateCa, rotationStage } from '../../src/certs/ca-rotation.ts';
import { caRotationCommand } from '../../src/certs/check.ts';
import { diagnose } from '../../src/doctor/diagnose.ts';
import { FailureError } from '../../src/errors.ts';
import { loadInventory } from '../../src/inventory.ts';
import { certifiedProject, hardway, issuedAt, snapshot } from './certs.helpers.ts';
import { recorded } from './doctor.helpers.ts';
import { breakKeyAlgorithm, failedCleanly } from './safety.helpers.ts';

const DAY = 86_400_000;
const ROOT = join(import.meta.dirname, '../..');

describe('certs --renew-ca and an unreadable CA file (item 6)', () => {
  const cases: Array<[string, (dir: string) => void, string]> = [
    ['ca.crt that is not PEM at all', (d) => writeFileSync(join(d, 'pki/ca.crt'), 'not a certificate\n'), 'pki/ca.crt is unreadable'],
    ['ca.crt with a malformed key-algorithm field', (d) => breakKeyAlgorithm(join(d, 'pki/ca.crt')), 'pki/ca.crt is unreadable'],
    ['ca.key that is not a key', (d) => writeFileSync(join(d, 'pki/ca.key'), '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'), 'pki/ca.key is unreadable'],
  ];
  for (const [what, breakIt, message] of cases) {
    it(`a ${what}: exit 1 naming the file, with what to do, and nothing written`, async () => {
      const p = await certifiedProject();
      breakIt(p.dir);
      const before = snapshot(p.dir);
      const run = await hardway(p, 'certs', '--renew-ca', '--yes');
      failedCleanly(run, 1, message);
      expect(run.stderr.split('\n')[0]).toContain('nothing was changed');
      expect(run.stderr).toContain('hint: restore it from your backup of pki/');
      expect(snapshot(p.dir)).toEqual(before);
    });
  }

  it('the switch with ca.key kept offline says it is missing (not that it does not match), and writes nothing', async () => {
    const p = await certifiedProject();
    expect((await hardway(p, 'certs', '--renew-ca', '--yes')).code).toBe(0);
    renameSync(join(p.dir, 'pki/ca.key'), join(p.dir, 'ca.key.offline'));
    const before = snapshot(p.dir);
    // The stage itself (the CLI would first ask the machines over SSH whether they are up to date).
    const inv = loadInventory(p.machines);
    expect(rotationStage(p.dir)).toBe('switch');
    const err = await rotateCa(inv, new Date(), 'switch').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FailureError);
    expect((err as Error).message).toMatch(/^pki\/ca\.key is not in pki\/ \(kept offline\?\)/);
    expect(snapshot(p.dir)).toEqual(before);
  });
});

describe('kubeconfigs: the advice when the CA is unreadable or away (items 6, 15)', () => {
  it('ca.crt unreadable: restore it, never "run hardway certs"', async () => {
    const p = await certifiedProject();
    breakKeyAlgorithm(join(p.dir, 'pki/ca.crt'));
    const run = await hardway(p, 'kubeconfigs');
    failedCleanly(run, 1, /ca \(certificate unreadable\)/);
    expect(run.stderr).toContain('hint: pki/ca.crt is unreadable: restore it from your backup of pki/');
    expect(run.stderr).not.toMatch(/run hardway certs/);
  });

  it('both CA files gone but the certificates there: restore ca.crt, never "run hardway certs" (it would make a new CA)', async () => {
    const p = await certifiedProject();
    rmSync(join(p.dir, 'pki/ca.crt'));
    rmSync(join(p.dir, 'pki/ca.key'));
    const run = await hardway(p, 'kubeconfigs');
    failedCleanly(run, 1, /ca \(certificate missing\)/);
    expect(run.stderr).toContain('hint: restore pki/ca.crt from your backup of pki/');
    expect(run.stderr).not.toMatch(/run hardway certs/);
  });

  it('only ca.key away (offline) and a certificate missing: put the key back first', async () => {
    const p = await certifiedProject();
    renameSync(join(p.dir, 'pki/ca.key'), join(p.dir, 'ca.key.offline'));
    rmSync(join(p.dir, 'pki/admin.crt'));
    const run = await hardway(p, 'kubeconfigs');
    failedCleanly(run, 1, /admin \(certificate missing\)/);
    expect(run.stderr).toContain('hint: put pki/ca.key back in pki/ (it is offline; hardway certs signs with it), run hardway certs, then hardway kubeconfigs');
  });

  it('nothing in pki/ at all: run hardway certs', async () => {
    const p = await certifiedProject();
    rmSync(join(p.dir, 'pki'), { recursive: true });
    const run = await hardway(p, 'kubeconfigs');
    failedCleanly(run, 1, 'has none yet');
    expect(run.stderr).toContain('hint: run hardway certs');
  });
});

describe('certs check with the CA key kept offline (item 15)', () => {
  it('is a warning saying the CA key is offline: exit 0, ok in the JSON', async () => {
    const p = await certifiedProject({ kubeconfigs: true });
    renameSync(join(p.dir, 'pki/ca.key'), join(p.dir, 'ca.key.offline'));
    const text = await hardway(p, 'certs', 'check');
    expect(text.code, text.stdout).toBe(0);
    expect(text.stdout).toMatch(/^ca\s+warn /m);
    expect(text.stdout).toMatch(/^\s+! the CA key is offline \(pki\/ca\.key is not in pki\/\)/m);
    const certs = await hardway(p, 'certs');
    failedCleanly(certs, 1, 'pki/ca.crt exists but pki/ca.key is missing');
    expect(certs.stderr).toContain('if you keep it offline, put it back in pki/ for this run');
    const json = JSON.parse((await hardway(p, 'certs', 'check', '--json')).stdout);
    expect(json.ok).toBe(true);
    expect(json.certificates[0]).toMatchObject({ name: 'ca', ok: true, problems: [], warnings: [expect.stringMatching(/^the CA key is offline/)] });
    // Without the certificate too, the CA is gone: that stays a problem.
    renameSync(join(p.dir, 'pki/ca.crt'), join(p.dir, 'ca.crt.away'));
    expect((await hardway(p, 'certs', 'check')).code).toBe(1);
  });
});

describe('one CA-rotation text, and it works as typed (item 9)', () => {
  it('certs, certs check, --renew ca and the docs all say caRotationCommand()', async () => {
    const text = caRotationCommand();
    expect(text).toMatch(/^hardway certs --renew-ca --yes, 3 times \(start, switch, finish\), each followed by hardway distribute/);
    const p = await certifiedProject();
    issuedAt(p.dir, 'ca', new Date(Date.now() - 400 * DAY));
    expect((await hardway(p, 'certs')).stderr).toContain(text);
    expect((await hardway(p, 'certs', 'check')).stdout).toContain(text);
    expect((await hardway(p, 'certs', '--renew', 'ca')).stderr).toContain(text);
    for (const doc of ['README.md', 'docs/security.md', 'docs/day-two.md']) {
      expect(readFileSync(join(ROOT, doc), 'utf8').replace(/\s*\n\s*/g, ' '), doc).toContain(text);
    }
    expect(caRotationCommand(' --dir /x')).toContain('hardway certs --renew-ca --yes --dir /x, 3 times');
  });

  it('doctor gives the same text (with the project\'s arguments) for a CA near its end on a machine', () => {
    const { ctx, evidence, api } = recorded('healthy');
    const notAfter = Date.parse(new X509Certificate(ctx.pki['pki/ca.crt']!).validTo);
    evidence[1]!.probes.clock = { code: 0, stdout: `${Math.floor((notAfter - 5 * DAY) / 1000)}\n` };
    const fixes = diagnose(ctx, evidence, api).map((f) => f.fix).filter((f): f is string => typeof f === 'string' && f.includes('--renew-ca'));
    expect(fixes.length).toBeGreaterThan(0);
    for (const fix of fixes) expect(fix).toBe(caRotationCommand(ctx.projectArgs));
  });

  it('the command it gives runs as typed (with its --yes): the first stage starts', async () => {
    const p = await certifiedProject();
    const typed = caRotationCommand().split(',')[0]!.split(' ');
    expect(typed).toEqual(['hardway', 'certs', '--renew-ca', '--yes']);
    const run = await hardway(p, ...typed.slice(1));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('CA rotation 1/3 (start)');
  });
});
