// The CoreDNS image (images/coredns.tar): one layer holding /coredns, hardway's offline build, in
// the same reproducible OCI archive as the pause and web images; and whether a project needs it.
import { readFile } from 'node:fs/promises';
import type { ClusterSettings } from '../cluster-settings.ts';
import { corednsImage, usesOfflineCoredns } from './image.ts';
import { PATH_ENV, type BuiltArchive } from '../images/build.ts';
import { buildCoredns } from '../images/coredns-build.ts';
import { caddyDeb, corednsSourceArchive, type InputOptions } from '../images/coredns-inputs.ts';
import { CADDY_DEB, COREDNS_ARCHIVE, COREDNS_VERSION } from '../images/coredns-recipe.ts';
import { COREDNS_IMAGE } from '../images/names.ts';
import { ociArchive, type RunConfig } from '../images/oci.ts';
import { writeTar } from '../images/tar.ts';

/** How the CoreDNS image runs: the binary, DNS on 53 (UDP and TCP), metrics on 9153, as upstream's image. */
export const COREDNS_RUN_CONFIG: RunConfig = {
  Entrypoint: ['/coredns'],
  Env: [PATH_ENV],
  WorkingDir: '/',
  ExposedPorts: { '53/tcp': {}, '53/udp': {}, '9153/tcp': {} },
};

/** What the image's history says made it. */
export interface CorednsBuilt {
  arch: string;
  goVersion: string;
  archiveSha256: string;
}

/** images/coredns.tar for a CoreDNS binary: pure, so equal inputs give equal bytes. */
export function corednsImageArchive(binary: Buffer, built: CorednsBuilt): BuiltArchive {
  const layer = writeTar([{ type: 'file', path: 'coredns', mode: 0o755, data: binary }]);
  const createdBy = `hardway build-images: /coredns built offline from the CoreDNS ${COREDNS_VERSION} source (sha256:${built.archiveSha256}) with ${built.goVersion.replace(/^go version /, '')}`;
  return { file: 'coredns.tar', image: COREDNS_IMAGE, data: ociArchive({ name: COREDNS_IMAGE, arch: built.arch, layer, config: COREDNS_RUN_CONFIG, createdBy }) };
}

/** Why the cluster does not need hardway's CoreDNS image (one line), or undefined when it does. */
export function whyNoCoredns(settings: Pick<ClusterSettings, 'dns'>, kubernetes: { version: string; minor: number; from: string }): string | undefined {
  if (usesOfflineCoredns(settings, kubernetes.minor)) return undefined;
  if (!settings.dns.enabled) return 'dns.enabled is false in cluster.yaml';
  const image = corednsImage(settings, kubernetes.minor);
  if (settings.dns.image !== undefined) return `the cluster runs ${image} (dns.image in cluster.yaml)`;
  return `Kubernetes ${kubernetes.version} (${kubernetes.from}) runs the upstream ${image}, which containerd pulls`;
}

/** Everything the CoreDNS image needs: where its inputs come from, and the build's collaborators. */
export interface CorednsImageOptions extends InputOptions {
  cacheRoot: string;
  arch: string;
  aptListsRoot: string;
  log: (line: string) => void;
}

/** The source archive (verified), the binary (cached or built) and the image archive of it. */
export async function buildCorednsImage(opts: CorednsImageOptions): Promise<BuiltArchive> {
  const archive = await corednsSourceArchive(opts);
  opts.log(`  ${archive.said}`);
  const archiveSha256 = opts.archivePin?.sha256 ?? COREDNS_ARCHIVE.sha256;
  const built = await buildCoredns({
    cacheRoot: opts.cacheRoot, arch: opts.arch, aptListsRoot: opts.aptListsRoot, log: opts.log,
    archive: { path: archive.path, sha256: archiveSha256 },
    caddy: {
      sha256: opts.caddyPin?.sha256 ?? CADDY_DEB.sha256,
      get: async () => {
        const deb = await caddyDeb(opts);
        opts.log(`  ${deb.said}`);
        return deb.path;
      },
    },
  });
  return corednsImageArchive(await readFile(built.path), { arch: opts.arch, goVersion: built.record.inputs.goVersion, archiveSha256 });
}
