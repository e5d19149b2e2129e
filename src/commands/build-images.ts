// `hardway build-images`: the pause and web images of an offline cluster, and CoreDNS's when the
// cluster runs hardway's own build of it, as OCI archives in images/ beside machines.txt, where
// `hardway images` loads them from.
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { INVENTORY_OPTIONS, jsonOption, machinesFile, projectNamed, say, type CommandModule, type CliContext } from '../cli/command.ts';
import { reportLines } from '../cli/json-output.ts';
import { defaultSettings, loadClusterSettings } from '../cluster-settings.ts';
import { InputError } from '../errors.ts';
import { hostArch, parseArch } from '../download/arch.ts';
import { cacheDir } from '../download/cache.ts';
import { createProgress } from '../download/progress.ts';
import { buildImages } from '../images/build.ts';
import { buildCorednsImage, whyNoCoredns } from '../dns/coredns-image.ts';
import { COREDNS_ARCHIVE, COREDNS_VERSION } from '../images/coredns-recipe.ts';
import { COREDNS_IMAGE, imagesDir, PAUSE_IMAGE, WEB_IMAGE } from '../images/names.ts';
import { displayPath } from '../input-file.ts';
import { parseKubernetesVersion } from '../render/kubernetes-version.ts';
import { kubernetesToRender } from '../steps/support/kubernetes-version.ts';

/** The `hardway build-images` command. */
export const buildImagesCommand: CommandModule = {
  name: 'build-images',
  details: [
    `images/pause.tar (${PAUSE_IMAGE}: sleeps, the pod sandbox image) and`,
    `images/web.tar (${WEB_IMAGE}: busybox httpd on port 80), each an OCI image archive that`,
    '`ctr images import` loads and "hardway images" puts on every worker. Their only binary is',
    "/bin/busybox from Debian's busybox-static, fetched with apt-get download and verified against",
    'the apt index (cached in ${XDG_CACHE_HOME:-~/.cache}/hardway/downloads).',
    '',
    `images/coredns.tar (${COREDNS_IMAGE}: /coredns; DNS on 53/udp and 53/tcp, metrics on`,
    "9153/tcp) when the cluster runs hardway's own CoreDNS: dns.enabled, and dns.image unset on",
    `Kubernetes 1.20 or set to that image. CoreDNS ${COREDNS_VERSION} is built offline with Debian's Go from its`,
    "source archive, the libraries of Debian's kubernetes source package and a few Debian packages",
    '(only unpacked, verified against the signed index). The archive must have the SHA-256',
    `${COREDNS_ARCHIVE.sha256}; it is taken from dns.source of`,
    'cluster.yaml (a path relative to the project directory, or an http(s) URL), else from the',
    'cache. The first build takes 2 to 4 minutes on 2 cores; the binary is then cached by every input',
    '(${XDG_CACHE_HOME:-~/.cache}/hardway/coredns-build), and one build of the same inputs runs at a time.',
    '',
    'A rebuild gives the same bytes: fixed times, owner 0:0, sorted entries, no compression; archives',
    'already right are left untouched.',
  ].join('\n'),
  options: {
    arch: { type: 'string', arg: 'amd64|arm64', description: "the machines' architecture (default: this machine's)" },
    ...INVENTORY_OPTIONS,
    json: jsonOption('{ok, lines}, as printed without --json; the progress goes to stderr'),
  },
  examples: [
    ['hardway build-images', "images/pause.tar and images/web.tar (and CoreDNS's when the cluster needs hardway's own)"],
    ['hardway build-images --arch arm64', 'the same for arm64 machines'],
  ],
  jsonFields: { lines: [] },
  run: (ctx) => reportLines(ctx, buildImagesNow),
};

/** `hardway build-images` once its options are read. */
async function buildImagesNow(ctx: CliContext): Promise<number> {
  const { values, cwd, env, stdout, stderr } = ctx;
  const arch = typeof values.arch === 'string' ? parseArch(values.arch) : await hostArch();
  const machines = machinesFile(ctx);
  if (!existsSync(machines) && projectNamed(ctx)) {
    throw new InputError(`${displayPath(machines)} not found`, 'pass --dir DIR of your project (images/ goes into it)');
  }
  const projectDir = dirname(machines);
  const clusterFile = join(projectDir, 'cluster.yaml');
  const settings = existsSync(machines) ? loadClusterSettings(clusterFile, displayPath(clusterFile)) : defaultSettings();
  const choice = kubernetesToRender({ dir: projectDir, settings });
  const noCoredns = whyNoCoredns(settings, { ...choice, minor: parseKubernetesVersion(choice.version)!.minor });
  const cache = cacheDir(env);
  const cacheRoot = dirname(cache);
  const aptListsRoot = join(cacheRoot, 'apt-lists');
  const log = (line: string) => say(stdout, line);
  const where = relative(cwd, imagesDir(projectDir)) || '.';
  const images = noCoredns === undefined ? `${PAUSE_IMAGE}, ${WEB_IMAGE} and ${COREDNS_IMAGE}` : `${PAUSE_IMAGE} and ${WEB_IMAGE}`;
  say(stdout, `hardway build-images: ${images} for ${arch} into ${where}`);
  if (noCoredns !== undefined) log(`  coredns: not built: ${noCoredns}`);
  const coredns = noCoredns !== undefined ? undefined : () => buildCorednsImage({
    projectDir, source: settings.dns.source, clusterFile, clusterShown: displayPath(clusterFile),
    cache, cacheRoot, arch, aptListsRoot, log, progress: createProgress(stderr as NodeJS.WriteStream),
  });
  const r = await buildImages({ projectDir, arch, cache, aptListsRoot, log, coredns });
  for (const f of r.written) log(`  written ${relative(cwd, join(projectDir, f)) || f}`);
  for (const f of r.unchanged) log(`  unchanged ${relative(cwd, join(projectDir, f)) || f}`);
  log(`${where}: ${r.written.length} written, ${r.unchanged.length} unchanged`);
  return 0;
}
