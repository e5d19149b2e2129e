// What a support bundle holds of one machine, read in one facts round trip of registry probes and
// file requests (read-only, like the rest of doctor): each hardway service's state and the last
// lines of its journal, every file hardway installs there with its SHA-256 against the one it would
// install (never a content of pki/), routes, /etc/hosts, and on a worker the CNI and kubelet configs.
import { createHash } from 'node:crypto';
import { createFacts, type FileFact, type ProbeResult } from '../engine/facts.ts';
import type { Inventory, Machine } from '../inventory.ts';
import { WORKER } from '../layout.ts';
import { routes } from '../probes/network.ts';
import { journalTails, serviceStates, type ServiceState } from '../probes/systemd.ts';
import { renderMachine } from '../render/machine.ts';
import { kubernetesToRender } from '../steps/support/kubernetes-version.ts';
import { placementContent, placements } from '../steps/support/placements.ts';
import { containerdRenderOptions } from '../steps/support/worker-render.ts';
import { expectedServices } from '../steps/verify.ts';
import type { Connect } from '../transport/index.ts';

/** Lines of each service's journal in the bundle. */
export const JOURNAL_LINES = 60;

/** One text file of the bundle, by its path inside the bundle. */
export interface BundleText {
  path: string;
  text: string;
}

/** A file hardway installs on a machine and the SHA-256 it would install there ('' when pki/ or the render lacks it). */
export interface ManagedFile {
  path: string;
  sha256: string;
  from: string;
}

/** Every file hardway installs on `m`: pki/ placements and whole rendered files (the merged blocks of pin-hosts aside). */
export function managedFiles(inv: Inventory, m: Machine): ManagedFile[] {
  const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
  const fromPki = placements(inv, m).map((p) => {
    let expected = '';
    try {
      expected = sha(placementContent(inv, p));
    } catch {
      // pki/ lacks it: the bundle says so rather than failing.
    }
    return { path: p.to, sha256: expected, from: p.from };
  });
  let rendered: ManagedFile[] = [];
  try {
    rendered = renderMachine(inv, m, { kubernetes: kubernetesToRender(inv), ...containerdRenderOptions(inv) })
      .filter((f) => f.mergeInto === undefined).map((f) => ({ path: f.path, sha256: sha(f.content), from: `rendered (${f.step})` }));
  } catch (e) {
    rendered = [{ path: '(rendering failed)', sha256: '', from: (e as Error).message }];
  }
  return [...fromPki, ...rendered];
}

/** The configs read whole (text, never a secret): /etc/hosts, and on a worker the CNI configs and the kubelet's config. */
function configsOf(m: Machine): { path: string; name: string }[] {
  const worker = m.role === 'worker'
    ? [{ path: WORKER.cniBridgeConf, name: 'cni/10-bridge.conf' }, { path: WORKER.cniLoopbackConf, name: 'cni/99-loopback.conf' }, { path: WORKER.kubeletConfig, name: 'kubelet-config.yaml' }]
    : [];
  return [{ path: '/etc/hosts', name: 'etc-hosts' }, ...worker];
}

/** `PATH  STATE  SHA-256 HERE / WANTED  FROM`: ok, differs, missing, or unknown when hardway has nothing to compare with. */
export function filesReport(files: readonly ManagedFile[], stats: ReadonlyMap<string, FileFact>): string {
  const lines = files.filter((f) => !f.path.startsWith('(')).map((f) => {
    const st = stats.get(f.path);
    const here = st?.exists ? st.sha256 ?? '?' : '-';
    const state = !st?.exists ? 'missing' : f.sha256 === '' ? 'unknown' : here === f.sha256 ? 'ok' : 'differs';
    return `${state.padEnd(8)} ${f.path}\n         here ${here}\n         want ${f.sha256 || '-'} (${f.from})`;
  });
  const failed = files.filter((f) => f.path.startsWith('(')).map((f) => `${f.path}: ${f.from}`);
  return [...failed, ...lines].join('\n') + '\n';
}

/** `NAME  enabled=...  active=...` per service. */
export function servicesReport(services: readonly string[], states: ReadonlyMap<string, ServiceState>): string {
  return services.map((s) => {
    const st = states.get(s);
    return st ? `${s.padEnd(26)} enabled=${st.enabled || 'none'} active=${st.active || 'unknown'}${st.needsReload ? ' needs-daemon-reload' : ''}` : `${s.padEnd(26)} (not known to systemd)`;
  }).join('\n') + '\n';
}

/** The bundle's files of one machine (under `machines/HOST/`); a machine that does not answer gets unreachable.txt. Never throws. */
export async function machineBundle(inv: Inventory, m: Machine, connect: Connect): Promise<BundleText[]> {
  const dir = `machines/${m.hostname}`;
  let t;
  try {
    t = await connect({ name: m.hostname, machine: m });
  } catch (e) {
    return [{ path: `${dir}/unreachable.txt`, text: `${(e as Error).message}\n` }];
  }
  try {
    const services = expectedServices(inv, m);
    const files = managedFiles(inv, m);
    const configs = configsOf(m);
    const probes = [serviceStates.ask(services), journalTails.ask(services, JOURNAL_LINES), routes.ask()] as const;
    const answers = await createFacts(t).batch([
      ...files.map((f) => ({ op: 'S' as const, path: f.path })),
      ...configs.map((c) => ({ op: 'R' as const, path: c.path })),
      ...probes,
    ]);
    const stats = new Map(files.map((f, i) => [f.path, answers[i] as FileFact]));
    const read = answers.slice(files.length, files.length + configs.length) as FileFact[];
    const [states, journals, table] = answers.slice(files.length + configs.length) as ProbeResult[];
    return [
      { path: `${dir}/services.txt`, text: servicesReport(services, probes[0].parse(states!)) },
      { path: `${dir}/journal.txt`, text: journals!.stdout },
      { path: `${dir}/files.txt`, text: filesReport(files, stats) },
      { path: `${dir}/routes.txt`, text: table!.stdout },
      ...configs.map((c, i) => ({ path: `${dir}/${c.name}`, text: read[i]!.exists && read[i]!.content ? read[i]!.content!.toString('utf8') : '(missing)\n' })),
    ];
  } catch (e) {
    return [{ path: `${dir}/unreachable.txt`, text: `the read-only batch failed: ${(e as Error).message}\n` }];
  } finally {
    await t.close().catch(() => undefined);
  }
}
