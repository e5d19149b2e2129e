// `hardway certs --renew-ca [etcd-ca] [--force]`: one stage of the rotation of the cluster CA or of
// the etcd CA (src/certs/ca-rotation.ts).
// The stages that make machines meet certificates of the new CA (switch) or stop trusting the old
// one (finish) first make sure every machine holds what pki/ holds now, by asking each one what
// `hardway distribute` would change there (a dry run: nothing is written).
import { PassThrough } from 'node:stream';
import type { CliContext } from '../cli/command.ts';
import { say } from '../cli/command.ts';
import { caLabel, nextStep, renewCaLine, rotateCa, rotationStage, ROTATION_FILES, type RotationStage } from '../certs/ca-rotation.ts';
import { identitiesFor, type CaName } from '../certs/identities.ts';
import { checkCertificates } from '../certs/check.ts';
import { ensureCertificates } from '../certs/ensure.ts';
import { FailureError } from '../errors.ts';
import type { Inventory } from '../inventory.ts';
import { printReport } from './print-report.ts';
import { writeKubeconfigs } from '../certs/write-kubeconfigs.ts';

/** The machines that do not hold pki/'s current files (or did not answer), each with why. */
export type MachinesBehind = (inv: Inventory, ctx: CliContext) => Promise<string[]>;

/** What each stage does, for --dry-run ("would ...") and the refusal without --yes. */
export function rotationWould(stage: RotationStage, name: CaName = 'ca'): string {
  const ca = caLabel(name);
  const crt = ROTATION_FILES[name].ca.crt;
  switch (stage) {
    case 'start': return `start a rotation of ${ca} (stage 1/3): a new CA joins ${crt} beside the old one, which still signs${name === 'ca' ? '; the kubeconfigs are rewritten' : ''}`;
    case 'switch': return `switch ${ca} (stage 2/3): the new CA signs, and every certificate of ${ca} is reissued with a new key`;
    default: return `finish the rotation of ${ca} (stage 3/3): the old CA leaves ${crt}, and a machine that still holds its certificates fails TLS`;
  }
}

/** Why each stage must wait for the machines, for the refusal. */
const RISK: Record<Exclude<RotationStage, 'start'>, string> = {
  switch: 'they may still trust only the old CA, and would reject every certificate the new one signs',
  finish: 'they may still hold certificates of the old CA, which the others would then reject',
};

/** Runs the next stage of the rotation of CA `name`; the caller holds the project's lock. */
export async function renewCa(inv: Inventory, ctx: CliContext, force: boolean, machinesBehind: MachinesBehind = distributeWouldChange, name: CaName = 'ca'): Promise<number> {
  const io = { stdout: ctx.stdout, stderr: ctx.stderr };
  const stage = rotationStage(inv.dir, name);
  if (stage === 'finish') {
    // The leaves this CA signs must all be the new one's before the old one stops being trusted.
    const signed = new Set(identitiesFor(inv).filter((i) => i.issuer === name).map((i) => i.name));
    const stale = checkCertificates(inv, new Date()).certificates.filter((c) => !c.ok && signed.has(c.name));
    if (stale.length > 0) {
      throw new FailureError(`the old CA cannot leave ${ROTATION_FILES[name].ca.crt} yet: ${stale.map((c) => `${c.name} (${c.problems.join('; ')})`).join(', ')}`,
        `run hardway certs (reissues them with the new CA) and hardway distribute, then ${renewCaLine(name)} again`);
    }
  }
  if (stage !== 'start') {
    const behind = await machinesBehind(inv, ctx);
    if (behind.length > 0 && !force) {
      throw new FailureError(
        `--renew-ca refused: ${behind.length} machine(s) do not hold pki/'s current CA files yet: ${behind.join('; ')}; ${RISK[stage]}`,
        'run hardway distribute first (then this again); --force goes ahead anyway (those machines fail TLS until they get the new files)',
      );
    }
    if (behind.length > 0) say(ctx.stderr, `warning: --force: going ahead although ${behind.join('; ')}`);
  }
  printReport(await rotateCa(inv, new Date(), stage, name), io);
  // The switch leaves every leaf of the CA signed by the old one: `certs` reissues exactly those.
  if (stage === 'switch') printReport(await ensureCertificates(inv, new Date()), io);
  const kubeconfigs = writeKubeconfigs(inv);
  printReport({ ...kubeconfigs, lines: kubeconfigs.lines.filter((l) => !l.kept) }, io);
  say(ctx.stdout, nextStep(stage, name));
  return 0;
}

/** What distribute would change on each machine (a dry run over SSH): the machines not up to date with pki/. */
export async function distributeWouldChange(inv: Inventory, ctx: CliContext): Promise<string[]> {
  const [{ remoteEntry }, { runRemote }] = await Promise.all([import('../command-table.ts'), import('./remote.ts')]);
  say(ctx.stdout, `checking that every machine holds pki/'s CA files (what hardway distribute --dry-run would change)...`);
  const quiet = new PassThrough();
  quiet.resume();
  // `hardway distribute --dry-run --keep-going --json` of the same project, inside this run's lock.
  const values = { ...ctx.values, 'dry-run': true, 'keep-going': true, json: true, node: undefined, only: undefined, concurrency: '10', machines: inv.machinesFile };
  const { result } = await runRemote(remoteEntry('distribute'), { ...ctx, values, positionals: [], stdout: quiet, stderr: quiet }, { lockHeld: true });
  return result.results.filter((r) => r.status !== 'unchanged')
    .map((r) => `${r.machine} (${r.status === 'failed' ? `not checked: ${(r.error ?? '').split('\n')[0]}` : `distribute would make ${r.changes} change(s)`})`);
}
