// End-to-end: `hardway lab up --registry` (Debian's docker-registry in a lab machine, the offline
// images pushed into it with skopeo) and cluster.yaml `registries` on real workers with Debian's
// containerd 1.6: localhost:5001/hardway/web:1 pulls through certs.d/localhost_5001_/hosts.toml; a
// changed mirror reaches the workers without restarting containerd; a registry removed from
// cluster.yaml takes its hardway-marked directory with it and leaves a hand-made one alone.
// Only the containerd side of the cluster runs here (worker-os, containerd): no kubelet is needed
// to pull through containerd's hosts config.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { archiveImages } from '../../src/images/oci.ts';
import { useLab, type Lab } from './helpers/lab.ts';

const lab = useLab({ name: 'e2e-reg', subnet: '10.240.60.0/24', servers: 1, workers: 2, registry: true });
const REGISTRY_IP = '10.240.60.5';
const CERTS = '/etc/containerd/certs.d';
/** How long `hardway download --source debian` may wait for another hardway's Kubernetes build (minutes on a fresh machine). */
const BUILD_WAIT_MS = 40 * 60_000;
const workers = () => lab().machines.filter((m) => m.role === 'worker').map((m) => m.hostname);

/** `hardway ...` in the lab directory; throws with its output unless it exits 0. */
async function hardway(l: Lab, args: string[]): Promise<string> {
  const r = await l.hardway(args);
  if (r.code !== 0) throw new Error(`hardway ${args.join(' ')} failed (exit ${r.code}):\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

/**
 * `hardway download --source debian`. Another hardway on this host may be building the Kubernetes
 * server binaries into the shared cache right now: this one then waits for it (the build lock,
 * src/download/build-cache.ts) and takes them from the cache (minutes on a fresh machine).
 */
async function download(l: Lab): Promise<void> {
  await hardway(l, ['download', '--source', 'debian']);
}

const invocationId = async (l: Lab, m: string) => (await l.run(m, 'systemctl show -p InvocationID --value containerd')).trim();
const pull = (l: Lab, m: string, image: string) => l.ssh(m, `/usr/local/bin/ctr -n k8s.io images pull --hosts-dir ${CERTS} ${image}`);
const listDirs = async (l: Lab, m: string) => (await l.run(m, `cd ${CERTS} && ls -1`)).trim().split('\n').sort();
const setRegistries = (l: Lab, yaml: string) => {
  const file = join(l.dir, 'cluster.yaml');
  const text = readFileSync(file, 'utf8');
  writeFileSync(file, text.slice(0, text.indexOf('registries:')) + yaml);
};

describe('lab up --registry and cluster.yaml registries on workers with Debian\'s containerd', () => {
  it('lab up --registry: a registry machine (not in machines.txt) whose docker-registry holds the offline images, and localhost:5001 mapped to it in cluster.yaml', async () => {
    const l = lab();
    expect(l.machines.map((m) => m.hostname)).toEqual(['server', 'node-0', 'node-1']);
    expect(readFileSync(join(l.dir, 'cluster.yaml'), 'utf8')).toContain('registries:\n  localhost:5001:\n    mirrors:\n      - url: http://registry:5000\n        plainHttp: true\n');
    expect((await l.run('registry', "systemctl is-active docker-registry; dpkg-query -W -f '${Status}' docker-registry")).trim()).toBe('active\ninstall ok installed');
    const catalog = await (await fetch(`http://${REGISTRY_IP}:5000/v2/_catalog`)).json();
    expect(catalog).toEqual({ repositories: ['hardway/pause', 'hardway/web'] });
    const status = await l.hardway(['lab', 'status', '--name', 'e2e-reg', '--json']);
    expect(JSON.parse(status.stdout).labs[0].machines.map((m: { hostname: string; role: string; ssh: boolean }) => `${m.hostname} ${m.role} ${m.ssh}`))
      .toEqual(['registry registry true', 'server control-plane true', 'node-0 worker true', 'node-1 worker true']);
    // Every cluster machine resolves the registry by name (cloud-init's hosts template).
    for (const m of l.machines) expect((await l.run(m.hostname, 'getent hosts registry')).trim()).toMatch(/^10\.240\.60\.5\s+registry\.kubernetes\.local registry$/);
    // A rerun pushes nothing new.
    const again = await l.hardway(['lab', 'up', '--name', 'e2e-reg', '--subnet', '10.240.60.0/24', '--dir', l.dir, '--registry']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already running, nothing to do');
    expect(again.stdout).toMatch(/localhost:5001\/hardway\/web:1: already in the registry/);
    // The install is the lab-registry step: its run is logged like any step's, and a dry run plans nothing more.
    const logs = readdirSync(join(l.dir, 'logs')).filter((f) => f.includes('-lab-up-'));
    expect(logs.length).toBeGreaterThanOrEqual(2);
    expect(logs.map((f) => readFileSync(join(l.dir, 'logs', f), 'utf8')).join('\n')).toMatch(/registry: lab-registry: plan has \d+ change\(s\)\n\s+run: DEBIAN_FRONTEND=noninteractive dpkg -i/);
    const dry = await l.hardway(['lab', 'up', '--name', 'e2e-reg', '--subnet', '10.240.60.0/24', '--dir', l.dir, '--registry', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('registry: lab-registry: unchanged');
    expect(dry.stdout).toContain('dry run: lab up would change nothing on registry (lab-registry); nothing was changed');
  });

  it('containerd on every worker pulls localhost:5001/hardway/web:1 through certs.d/localhost_5001_/hosts.toml, the digest of images/web.tar', async () => {
    const l = lab();
    await download(l);
    await hardway(l, ['bootstrap-workers', '--only', 'worker-os']);
    await hardway(l, ['bootstrap-workers', '--only', 'containerd']);
    const web = archiveImages(join(l.dir, 'images/web.tar'))[0]!;
    for (const w of workers()) {
      expect(await l.run(w, `grep -c config_path /etc/containerd/config.toml`)).toBe('1\n');
      expect((await l.run(w, `head -n 1 ${CERTS}/localhost_5001_/hosts.toml`)).startsWith('# Managed by hardway')).toBe(true);
      const r = await pull(l, w, 'localhost:5001/hardway/web:1');
      expect(r.code, `${w}: ${r.stderr}`).toBe(0);
      const listed = await l.run(w, '/usr/local/bin/ctr -n k8s.io images ls -q');
      expect(listed.split('\n')).toContain('localhost:5001/hardway/web:1');
      expect(await l.run(w, `/usr/local/bin/ctr -n k8s.io images ls "name==localhost:5001/hardway/web:1"`)).toContain(web.digest);
    }
    // Without the hosts config the same name goes to localhost:5001 on the worker, where nothing listens.
    const direct = await l.ssh('node-0', '/usr/local/bin/ctr -n k8s.io images pull --plain-http localhost:5001/hardway/pause:1');
    expect(direct.code).not.toBe(0);
  }, BUILD_WAIT_MS + 10 * 60_000);

  it('a changed mirror reaches the workers without restarting containerd, and pulls through the new URL', async () => {
    const l = lab();
    const before = new Map(await Promise.all(workers().map(async (w) => [w, await invocationId(l, w)] as const)));
    setRegistries(l, 'registries:\n  localhost:5001:\n    mirrors:\n      - url: http://registry.kubernetes.local:5000\n        plainHttp: true\n');
    const run = await l.hardway(['bootstrap-workers', '--only', 'containerd', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).changed).toBe(workers().length); // one hosts.toml per worker, nothing else
    for (const w of workers()) {
      expect(await invocationId(l, w)).toBe(before.get(w));
      expect(await l.run(w, `cat ${CERTS}/localhost_5001_/hosts.toml`)).toContain('[host."http://registry.kubernetes.local:5000"]');
      const r = await pull(l, w, 'localhost:5001/hardway/pause:1');
      expect(r.code, `${w}: ${r.stderr}`).toBe(0);
    }
  });

  it('a registry removed from cluster.yaml: its hardway-marked directory goes, a hand-made one stays, containerd keeps running', async () => {
    const l = lab();
    await l.run('node-0', `mkdir -p ${CERTS}/quay.io && printf 'server = "https://quay.io"\\n' > ${CERTS}/quay.io/hosts.toml`);
    const before = new Map(await Promise.all(workers().map(async (w) => [w, await invocationId(l, w)] as const)));
    // localhost:5001 leaves; registries stays set (config_path unchanged) with another registry.
    setRegistries(l, 'registries:\n  docker.io:\n    mirrors:\n      - url: http://registry:5000\n        plainHttp: true\n');
    const plan = await hardway(l, ['bootstrap-workers', '--only', 'containerd', '--dry-run']);
    expect(plan).toContain(`rm -rf -- ${CERTS}/localhost_5001_`);
    expect(plan).not.toContain('quay.io');
    await hardway(l, ['bootstrap-workers', '--only', 'containerd']);
    expect(await listDirs(l, 'node-0')).toEqual(['docker.io', 'quay.io']);
    expect(await listDirs(l, 'node-1')).toEqual(['docker.io']);
    for (const w of workers()) expect(await invocationId(l, w)).toBe(before.get(w));
    expect((await l.run('node-0', `cat ${CERTS}/quay.io/hosts.toml`))).toBe('server = "https://quay.io"\n');
    // Converged: a rerun changes nothing.
    const again = await l.hardway(['bootstrap-workers', '--only', 'containerd', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).changed).toBe(0);
  });
});
