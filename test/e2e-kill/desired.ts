// What every machine of the kill test's lab should hold, from hardway's own sources: the files of
// `hardway render --out`, the local files (binaries, CNI plugins, image archives) its up logs say
// it uploaded where, and pki/ as it is now; the pinned hosts blocks; and which files each service
// must have been (re)started after (the inputs hardway restarts it for).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadInventory, type Inventory } from '../../src/inventory.ts';
import { renderMachine } from '../../src/render/machine.ts';
import { placementContent, placements } from '../../src/steps/support/placements.ts';
import { kubernetesToRender } from '../../src/steps/support/kubernetes-version.ts';
import { expectedServices } from '../../src/steps/verify.ts';

/** Services hardway restarts when one of their inputs changes (the routes unit only replays routes at boot). */
const RESTARTED_ON_CHANGE = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'containerd', 'kubelet', 'kube-proxy'];
/** Binaries whose change restarts a service (bootstrap-etcd, bootstrap-control-plane, the worker components). */
const BINARY_INPUTS: Record<string, string[]> = {
  etcd: ['etcd'],
  'kube-apiserver': ['kube-apiserver'],
  'kube-controller-manager': ['kube-controller-manager'],
  'kube-scheduler': ['kube-scheduler'],
  containerd: ['containerd', 'containerd-shim-runc-v2', 'ctr', 'runc'],
  kubelet: ['kubelet'],
  'kube-proxy': ['kube-proxy'],
};

/** SHA-256 in hex. */
export const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/** What every machine should hold, from hardway's own sources: render --out, downloads/ and images/ (as the first up's log names them), pki/. */
export class Desired {
  /** machine -> path -> SHA-256, for rendered files and local files (binaries, plugins, images). */
  private readonly fixed = new Map<string, Map<string, string>>();
  /** machine -> target -> the pinned block it must contain. */
  readonly blocks = new Map<string, Map<string, string>>();
  /** machine -> service -> input paths (files hardway restarts it for). */
  readonly inputs = new Map<string, Map<string, string[]>>();
  readonly inv: Inventory;

  constructor(dir: string, renderDir: string, upLogs: string) {
    this.inv = loadInventory(join(dir, 'machines.txt'));
    const k8s = kubernetesToRender(this.inv);
    const localSha = new Map<string, string>();
    for (const m of this.inv.machines) {
      const files = new Map<string, string>();
      const blocks = new Map<string, string>();
      const root = join(renderDir, m.hostname);
      for (const f of (readdirSync(root, { recursive: true }) as string[]).filter((x) => statSync(join(root, x)).isFile())) {
        const body = readFileSync(join(root, f));
        if (f.endsWith('.hardway-block')) blocks.set(`/${f.slice(0, -'.hardway-block'.length)}`, body.toString('utf8'));
        else files.set(`/${f}`, sha256(body));
      }
      // "HOST: upload PATH mode 0755 owner root:root (local file FILE)": binaries, CNI plugins, image archives.
      for (const [, path, file] of upLogs.matchAll(new RegExp(`^\\S+ ${m.hostname}: upload (\\S+) mode \\d+ owner \\S+ \\(local file (.+)\\)$`, 'gm'))) {
        if (!localSha.has(file!)) localSha.set(file!, sha256(readFileSync(file!)));
        files.set(path!, localSha.get(file!)!);
      }
      this.fixed.set(m.hostname, files);
      this.blocks.set(m.hostname, blocks);
      const inputs = new Map<string, string[]>();
      const add = (s: string, p: string) => RESTARTED_ON_CHANGE.includes(s) && inputs.set(s, [...(inputs.get(s) ?? []), p]);
      for (const f of renderMachine(this.inv, m, { kubernetes: k8s })) for (const s of f.services) add(s, f.path);
      for (const p of placements(this.inv, m)) for (const s of p.services) add(s, p.to);
      for (const s of expectedServices(this.inv, m)) for (const b of BINARY_INPUTS[s] ?? []) add(s, `/usr/local/bin/${b}`);
      this.inputs.set(m.hostname, inputs);
    }
  }

  /** path -> SHA-256 of every file hardway installs on `m`, pki/ as it is now ('not in pki/' for a file pki/ lacks). */
  files(m: string): Map<string, string> {
    const machine = this.inv.machines.find((x) => x.hostname === m)!;
    const out = new Map(this.fixed.get(m)!);
    for (const p of placements(this.inv, machine)) {
      const from = join(this.inv.dir, p.from);
      out.set(p.to, existsSync(from) ? sha256(placementContent(this.inv, p)) : 'not in pki/');
    }
    return out;
  }

  /** The services that must be active on `m` (what verify checks). */
  services(m: string): string[] {
    return expectedServices(this.inv, this.inv.machines.find((x) => x.hostname === m)!);
  }
}

