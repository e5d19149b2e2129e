// `lab up --registry`: one more lab machine, `registry`, running Debian's docker-registry (the
// distribution registry) as a systemd service, with the project's offline images pushed into it by
// skopeo from the host. It is infrastructure of the lab, like a cloud's registry: the cluster
// machines reach it by name (a line in their cloud-init hosts template, outside pin-hosts' block),
// and the lab's cluster.yaml maps localhost:5001 to it through `registries`, as the write-up does;
// machines.txt does not list it.
//
// How the package gets into a machine that has no route out: the .deb is fetched on the host with
// apt-get download (verified against the apt index, cached like every other .deb), copied into the
// machine's root before it boots, and installed there with dpkg -i once it runs by the lab-registry
// step (registry-step.ts: a plan, a dry run, the run log), so its maintainer scripts run under the
// machine's own systemd (user, enablement, start) as on any Debian host. Its dependencies
// (adduser, lsb-base, libc6, init-system-helpers) are already in the lab's root; dpkg -i fails
// loudly if that ever changes. A second cached root with the package baked in would cost
// another 500 MB and a debootstrap-sized build for one 5 MB package.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { aptFor, showPackages } from '../download/apt.ts';
import { downloadsIn, findVerified } from '../download/cache.ts';
import { fetchDebs } from '../download/debian.ts';
import { hostArch } from '../download/arch.ts';
import { FailureError, InputError } from '../errors.ts';
import { buildImages } from '../images/build.ts';
import { archiveImages } from '../images/oci.ts';
import { archiveNames } from '../steps/images.ts';
import { imagesDir } from '../images/names.ts';
import { local, tryLocal } from '../transport/local.ts';
import type { LabMachine } from './types.ts';

/** The registry machine's hostname, and its address: .5 of the lab subnet (servers start at .10). */
export const REGISTRY_HOSTNAME = 'registry';
export const REGISTRY_OFFSET = 5;
/** Where docker-registry listens (plain HTTP, inside the lab's network only). */
export const REGISTRY_PORT = 5000;
/** The registry name the lab's cluster.yaml maps to the registry machine (the write-up's kind registry). */
export const LAB_REGISTRY_NAME = 'localhost:5001';
/** The mirror URL the cluster machines use: the registry machine by name. */
export const LAB_REGISTRY_MIRROR = `http://${REGISTRY_HOSTNAME}:${REGISTRY_PORT}`;
/** Debian's distribution registry. */
export const REGISTRY_PACKAGE = 'docker-registry';

/** The .deb inside the machine, and the registry's config there. */
export const REGISTRY_DEB = '/var/cache/hardway-lab/docker-registry.deb';
export const REGISTRY_CONFIG = '/etc/docker/registry/config.yml';

/**
 * The registry's config: the package's own, less its htpasswd auth (it names a directory, not a
 * password file, and every client would need a password); plain HTTP on :5000, which only the lab's
 * bridge reaches.
 */
export function registryConfig(): string {
  return [
    '# Written by hardway lab: the lab registry, plain HTTP on :5000 inside the lab network, no auth',
    '# (nothing outside the lab reaches it). Images: skopeo copy from the host, by hardway lab up --registry.',
    'version: 0.1',
    'log:',
    '  fields:',
    '    service: registry',
    'storage:',
    '  cache:',
    '    blobdescriptor: inmemory',
    '  filesystem:',
    '    rootdirectory: /var/lib/docker-registry',
    'http:',
    `  addr: :${REGISTRY_PORT}`,
    '  headers:',
    '    X-Content-Type-Options: [nosniff]',
    'health:',
    '  storagedriver:',
    '    enabled: true',
    '    interval: 10s',
    '    threshold: 3',
    '',
  ].join('\n');
}

const HOSTS_BEGIN = '# BEGIN hardway lab: lab infrastructure, not cluster machines (written by hardway lab up)';
const HOSTS_END = '# END hardway lab';

/** The cloud-init hosts template of a cluster machine, with the registry's line in a block of its own (replaced, never appended twice). Pure. */
export function withRegistryHost(template: string, registry: Pick<LabMachine, 'ip' | 'fqdn' | 'hostname'>): string {
  const block = `${HOSTS_BEGIN}\n${registry.ip} ${registry.fqdn} ${registry.hostname}\n${HOSTS_END}\n`;
  const start = template.indexOf(HOSTS_BEGIN);
  if (start >= 0) {
    const end = template.indexOf(HOSTS_END, start);
    if (end >= 0) {
      const after = template.indexOf('\n', end);
      return template.slice(0, start) + block + (after >= 0 ? template.slice(after + 1) : '');
    }
  }
  return `${template}${template.endsWith('\n') || template === '' ? '' : '\n'}${block}`;
}

/**
 * Makes the registry resolvable on a cluster machine before it boots: cloud-init rewrites
 * /etc/hosts from this template at every boot (manage_etc_hosts), as on a cloud VM.
 */
export function addRegistryHost(root: string, registry: LabMachine): void {
  const file = join(root, 'etc/cloud/templates/hosts.debian.tmpl');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const next = withRegistryHost(text, registry);
  if (next !== text) writeFileSync(file, next);
}

/** docker-registry's .deb for this host's architecture, from the download cache or apt-get download (verified). */
export async function registryDeb(cacheRoot: string, report: (line: string) => void): Promise<string> {
  const cache = downloadsIn(cacheRoot);
  const arch = await hostArch();
  const apt = await aptFor(arch, join(cacheRoot, 'apt-lists'));
  const info = (await showPackages(apt, [REGISTRY_PACKAGE])).get(REGISTRY_PACKAGE);
  if (!info) throw new FailureError(`apt knows no package ${REGISTRY_PACKAGE} for ${arch}`, 'run "apt-get update" (with Debian main in the sources) and try again');
  const cached = await findVerified(cache, 'sha256', info.sha256);
  report(`${REGISTRY_PACKAGE} ${info.version}: ${cached ? 'cached' : 'downloading'}, sha256 verified`);
  return cached ?? (await fetchDebs(apt, [info], cache)).get(info.package)!;
}

/** Puts the .deb and the registry's config into the registry machine's root (before it boots). */
export function stageRegistry(root: string, deb: string): void {
  const target = join(root, REGISTRY_DEB);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(deb, target);
  const config = join(root, REGISTRY_CONFIG);
  mkdirSync(dirname(config), { recursive: true });
  writeFileSync(config, registryConfig());
}

/** Waits until the registry answers its API (GET /v2/ -> 200) from the host. */
export async function waitForRegistry(ip: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`http://${ip}:${REGISTRY_PORT}/v2/`, { signal: AbortSignal.timeout(2000) });
      if (r.status === 200) return;
      last = `HTTP ${r.status}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new FailureError(`the lab registry at ${ip}:${REGISTRY_PORT} did not answer GET /v2/ within ${timeoutMs / 1000} s (${last})`,
    `look at its log: hardway lab ssh ${REGISTRY_HOSTNAME} -- journalctl -u ${REGISTRY_PACKAGE}`);
}

/** The repository and tag an image is pushed as: its name without the registry ('localhost/hardway/web:1' -> 'hardway/web:1'). */
export function repositoryOf(image: string): string {
  const first = image.split('/')[0]!;
  const hasRegistry = image.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  return hasRegistry ? image.slice(first.length + 1) : image;
}

/** The digest the registry holds for repo:tag, if any (HEAD of the manifest). */
async function registryDigest(ip: string, repoTag: string): Promise<string | undefined> {
  const colon = repoTag.lastIndexOf(':');
  const url = `http://${ip}:${REGISTRY_PORT}/v2/${repoTag.slice(0, colon)}/manifests/${repoTag.slice(colon + 1)}`;
  const accept = ['application/vnd.oci.image.manifest.v1+json', 'application/vnd.oci.image.index.v1+json',
    'application/vnd.docker.distribution.manifest.v2+json', 'application/vnd.docker.distribution.manifest.list.v2+json'].join(', ');
  const r = await fetch(url, { method: 'HEAD', headers: { Accept: accept }, signal: AbortSignal.timeout(5000) });
  return r.status === 200 ? r.headers.get('docker-content-digest') ?? undefined : undefined;
}

/**
 * Pushes every image of the lab directory's images/ into the registry with skopeo (digests kept:
 * what a worker pulls is byte for byte what `hardway images` would load). Builds the pause and web
 * images first when images/ has none (`hardway build-images`, offline). Skips an image the registry
 * already holds at that digest. Returns one line per image, and the images the registry now holds
 * as workers pull them (localhost:5001/...).
 */
export async function pushImages(labDir: string, ip: string, cacheRoot: string, report: (line: string) => void): Promise<{ lines: string[]; images: string[] }> {
  if ((await tryLocal`sh -c ${'command -v skopeo'}`).code !== 0) {
    throw new InputError('lab up --registry pushes the images with skopeo, which is not installed on this host', 'apt-get install -y skopeo');
  }
  if (archiveNames(labDir).length === 0) {
    report('no images in images/ yet: building the pause and web images (hardway build-images)');
    const cache = downloadsIn(cacheRoot);
    await buildImages({ projectDir: labDir, arch: await hostArch(), cache, aptListsRoot: join(cacheRoot, 'apt-lists'), log: report });
  }
  const lines: string[] = [];
  const images: string[] = [];
  for (const name of archiveNames(labDir)) {
    const file = join(imagesDir(labDir), name);
    for (const image of archiveImages(file, `images/${name}`)) {
      const target = `${ip}:${REGISTRY_PORT}/${repositoryOf(image.name)}`;
      images.push(`${LAB_REGISTRY_NAME}/${repositoryOf(image.name)}`);
      if ((await registryDigest(ip, repositoryOf(image.name))) === image.digest) {
        lines.push(`${LAB_REGISTRY_NAME}/${repositoryOf(image.name)}: already in the registry (${image.digest.slice(0, 19)})`);
        continue;
      }
      report(`skopeo copy images/${name} -> ${target}`);
      await local`skopeo copy --quiet --preserve-digests --dest-tls-verify=false ${`oci-archive:${file}`} ${`docker://${target}`}`;
      lines.push(`${LAB_REGISTRY_NAME}/${repositoryOf(image.name)}: pushed from images/${name} (${image.digest.slice(0, 19)})`);
    }
  }
  return { lines, images };
}
