// One doctor run: read the project, ask the API and every machine at once (one SSH connection each,
// every step of up planning read-only over the same facts), judge, print. Read-only by construction:
// no lock, no run log, no write on any machine.
import type { Writable } from 'node:stream';
import { errorJson, formatError, isExpectedError } from '../errors.ts';
import { pathError } from '../input-file.ts';
import type { LabPaths } from '../lab/names.ts';
import { loadInventory, selectMachines } from '../inventory.ts';
import { Semaphore } from '../transport/semaphore.ts';
import { gatherApi } from './api.ts';
import type { ClusterApi } from '../cluster-api/cluster-api.ts';
import { archivedImages, defaultTestImages, labOf, pkiCertificates, renderedForDoctor } from './context.ts';
import { diagnose } from './diagnose.ts';
import { planDrift, upChangeSteps } from './drift.ts';
import { directFacts } from '../engine/direct-facts.ts';
import type { Facts } from '../engine/facts.ts';
import type { Machine } from '../inventory.ts';
import { shownPath, writeBundle } from './bundle.ts';
import { doctorJson, doctorText } from './format.ts';
import { widthOf } from '../ui/wrap.ts';
import { gatherMachine } from './gather.ts';
import { sharedConnections } from './shared-connections.ts';
import type { Connect } from '../transport/index.ts';
import { pullRequests, requestsFor } from './batch.ts';
import type { DoctorContext, Finding } from './types.ts';

/** What one run needs; `connect` opens a machine's transport (hostConnector with ONE_ATTEMPT in production). */
export interface DoctorRun {
  machinesFile: string;
  /** Arguments the suggested commands need too, with a leading space (e.g. ` --machines x/machines.txt`), or ''. */
  projectArgs: string;
  /** Only these machines (--node); undefined or empty: every machine. The API's findings are kept for them only. */
  nodes?: string[];
  /** Images to test-pull; undefined: defaultTestImages. */
  images?: string[];
  json: boolean;
  env: NodeJS.ProcessEnv;
  stdout: Writable;
  labPaths: LabPaths;
  connect: (inv: ReturnType<typeof loadInventory>) => Connect;
  /** The direct route to the API server (default none: kubectl from the jumpbox, as a test's fake cluster has no API server to dial). */
  clusterApi?: (inv: ReturnType<typeof loadInventory>) => ClusterApi | undefined;
  /** --bundle: also write a support bundle there (`force`: over a file already there), and say so on `stderr`. */
  bundle?: { file: string; stderr: Writable; cwd: string; force?: boolean };
}

/** Machines asked at once. */
const MACHINES_AT_ONCE = 32;

/** What runDoctor has read before it asks the machines. */
interface RunParts {
  started: number;
  inventory: ReturnType<typeof loadInventory>;
  selected: ReturnType<typeof selectMachines>;
  rendered: ReturnType<typeof renderedForDoctor>;
  pki: ReturnType<typeof pkiCertificates>;
  lab: ReturnType<typeof labOf>;
  api: ReturnType<typeof gatherApi>;
  images: Promise<string[]>;
  connect: Connect;
}

/** Runs doctor and returns the exit code: 0 nothing found, 1 problems found. */
export async function runDoctor(run: DoctorRun): Promise<{ code: number; findings: Finding[] }> {
  const started = Date.now();
  const inventory = loadInventory(run.machinesFile);
  const selected = selectMachines(inventory, run.nodes);
  const rendered = renderedForDoctor(inventory);
  const pki = pkiCertificates(inventory);
  const lab = labOf(inventory, run.labPaths);
  const api = gatherApi(inventory, run.env, run.clusterApi?.(inventory));
  const images = run.images ? Promise.resolve(run.images) : api.then((a) => defaultTestImages(inventory, a, lab));
  // With --bundle the bundle reads over the connections doctor opened, kept open until it is written.
  const shared = run.bundle ? sharedConnections(run.connect(inventory)) : undefined;
  const connect = shared?.connect ?? run.connect(inventory);
  try {
    return await diagnoseAndReport(run, { started, inventory, selected, rendered, pki, lab, api, images, connect });
  } finally {
    await shared?.closeAll();
  }
}

/** The gathering, the findings, the report and the bundle of one run, over `connect`. */
async function diagnoseAndReport(run: DoctorRun, r: RunParts): Promise<{ code: number; findings: Finding[] }> {
  const { started, inventory, selected, rendered, pki, lab, api, images, connect } = r;
  const gate = new Semaphore(MACHINES_AT_ONCE);
  const steps = await upChangeSteps();
  // The API steps' plans ask the API straight from the jumpbox, on a route of their own (the API
  // evidence's closes when it has its answer).
  const objectsApi = run.clusterApi?.(inventory);
  const apiFacts = objectsApi ? (m: Machine) => (facts: Facts) => directFacts(facts, objectsApi, inventory, m) : undefined;
  const evidence = await Promise.all(selected.map((m) => gate.run(() =>
    gatherMachine(m, [requestsFor(inventory, m, Object.keys(rendered[m.hostname] ?? {})), Promise.all([images, api]).then(([i, a]) => pullRequests(inventory, m, i, a.dnsPods))], connect,
      (facts) => planDrift(inventory, m, facts, steps, apiFacts?.(m)))))).finally(() => objectsApi?.close());
  const ctx: DoctorContext = {
    inventory, rendered, pki, lab, caPem: pki['pki/ca.crt'], projectArgs: run.projectArgs, testImages: await images, dnsPods: (await api).dnsPods ?? [], archived: archivedImages(inventory), now: Date.now(),
  };
  // The API's verdicts on the machines not asked about are left out; one about the API itself stays.
  const chosen = new Set(selected.map((m) => m.hostname));
  const findings = diagnose(ctx, evidence, await api).filter((f) => chosen.has(f.machine) || f.check === 'api');
  const seconds = (Date.now() - started) / 1000;
  const facts = { machines: selected.length, api: await api, testImages: ctx.testImages, seconds };
  // The bundle keeps the report unwrapped; the terminal gets it wrapped to its width.
  const text = doctorText(findings, facts);
  const shown = doctorText(findings, facts, widthOf(run.stdout));
  const code = findings.length ? 1 : 0;
  if (!run.bundle) {
    run.stdout.write((run.json ? doctorJson(findings) : shown) + '\n');
    return { code, findings };
  }
  // The text report first (the bundle takes a moment more); --json prints its one object only once
  // the bundle is written or has failed, naming it either way (its absolute path), so stdout never holds two.
  if (!run.json) run.stdout.write(shown + '\n');
  const bundle = shownPath(run.bundle.file, run.bundle.cwd);
  let files: number;
  try {
    files = await writeBundle({ file: run.bundle.file, inventory, machines: selected, doctorText: `${text}\n`, doctorJson: `${doctorJson(findings)}\n`, connect, env: run.env, force: run.bundle.force, cwd: run.bundle.cwd });
  } catch (e) {
    const known = isExpectedError(e) ? e : pathError(e, bundle);
    if (!run.json || known === undefined) throw known ?? e;
    run.stdout.write(JSON.stringify({ ok: false, findings, bundle: run.bundle.file, error: errorJson(known) }) + '\n');
    run.bundle.stderr.write(formatError(known) + '\n');
    return { code: known.exitCode, findings };
  }
  if (run.json) run.stdout.write(JSON.stringify({ ok: code === 0, findings, bundle: run.bundle.file }) + '\n');
  run.bundle.stderr.write(`support bundle: ${bundle} (${files} files; no key, token or kubeconfig of pki/ in it)\n`);
  return { code, findings };
}
