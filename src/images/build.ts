// `hardway build-images`: the two images an offline cluster needs, made from Debian's busybox-static
// (the .deb fetched and verified against the apt index like every `--source debian` package, and
// cached by its SHA-256): a pause image for pod sandboxes and a web image for the smoke test; and,
// when the cluster runs hardway's own CoreDNS, its image (src/dns/coredns-image.ts). The same
// inputs always give the same archive bytes, so a rebuild changes nothing.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { lstat, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeAtomic } from '../output-file.ts';
import { FailureError } from '../errors.ts';
import { extractDeb } from '../download/archive.ts';
import { aptFor, showPackages, type DebInfo } from '../download/apt.ts';
import { cacheTempPath, findVerified } from '../download/cache.ts';
import { fetchDebs } from '../download/debian.ts';
import { imagesDir, PAUSE_IMAGE, WEB_IMAGE } from './names.ts';
import { ociArchive, type RunConfig } from './oci.ts';
import { writeTar, type TarEntry } from './tar.ts';

/** The Debian package whose static busybox is every image's only binary. */
export const BUSYBOX_PACKAGE = 'busybox-static';

/** The busybox applets linked in /bin of every image (all in Debian 12's busybox-static). */
export const APPLETS = [
  'cat', 'cp', 'date', 'df', 'echo', 'env', 'false', 'grep', 'head', 'hostname', 'httpd', 'id', 'ip', 'kill', 'ln', 'ls',
  'mkdir', 'mv', 'nc', 'nslookup', 'ping', 'ps', 'pwd', 'rm', 'sed', 'sh', 'sleep', 'tail', 'test', 'touch', 'true', 'uname', 'wget',
] as const;

/** The page the web image serves at /. */
export const WEB_PAGE = `<!DOCTYPE html>
<html>
<head><title>hardway web image</title></head>
<body>
<h1>hardway web image</h1>
<p>This is the hardway web image (${WEB_IMAGE}): busybox httpd on port 80, built offline by "hardway build-images" from Debian's busybox-static.</p>
</body>
</html>
`;

/** The PATH every image's processes start with. */
export const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** One archive to write into images/: its file name, the image it holds, and its bytes. */
export interface BuiltArchive {
  file: string;
  image: string;
  data: Buffer;
}

/** Where the busybox binary came from, for the images' history line. */
export interface BusyboxSource {
  version: string;
  arch: string;
}

/** The pause and web archives for a busybox binary: pure, so equal inputs give equal bytes. */
export function imageArchives(busybox: Buffer, source: BusyboxSource): BuiltArchive[] {
  const createdBy = `hardway build-images: /bin/busybox from Debian ${BUSYBOX_PACKAGE} ${source.version} (${source.arch})`;
  const image = (file: string, name: string, extra: TarEntry[], config: RunConfig): BuiltArchive => ({
    file,
    image: name,
    data: ociArchive({ name, arch: source.arch, layer: busyboxLayer(busybox, extra), config, createdBy }),
  });
  return [
    image('pause.tar', PAUSE_IMAGE, [], { Entrypoint: ['/bin/sleep', '2147483647'], Env: [PATH_ENV], WorkingDir: '/' }),
    image(
      'web.tar',
      WEB_IMAGE,
      [
        { type: 'dir', path: 'www/', mode: 0o755 },
        { type: 'file', path: 'www/index.html', mode: 0o644, data: Buffer.from(WEB_PAGE) },
      ],
      { Entrypoint: ['/bin/httpd', '-f', '-p', '80', '-h', '/www'], Env: [PATH_ENV], WorkingDir: '/', ExposedPorts: { '80/tcp': {} } },
    ),
  ];
}

/** A layer tar: /bin/busybox, a link per applet, and `extra`, sorted by path. */
export function busyboxLayer(busybox: Buffer, extra: TarEntry[] = []): Buffer {
  const entries: TarEntry[] = [
    { type: 'dir', path: 'bin/', mode: 0o755 },
    { type: 'file', path: 'bin/busybox', mode: 0o755, data: busybox },
    ...APPLETS.map((a): TarEntry => ({ type: 'symlink', path: `bin/${a}`, target: 'busybox' })),
    ...extra,
  ];
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return writeTar(entries);
}

/** Everything a build needs, passed in. */
export interface BuildImagesOptions {
  projectDir: string;
  arch: string;
  /** The download cache (.debs by SHA-256), shared with `hardway download`. */
  cache: string;
  /** Where private apt lists for foreign architectures are kept. */
  aptListsRoot: string;
  log: (line: string) => void;
  /** The CoreDNS image, when the cluster runs hardway's own (src/dns/coredns-image.ts); unset: pause and web only. */
  coredns?: () => Promise<BuiltArchive>;
}

/** What a build did: archives written and archives already right, as paths under the project. */
export interface BuildImagesResult {
  written: string[];
  unchanged: string[];
  busybox: DebInfo;
}

/** Fetches busybox-static (cached, verified), builds the archives (CoreDNS's too if asked) and writes those that differ. */
export async function buildImages(opts: BuildImagesOptions): Promise<BuildImagesResult> {
  const apt = await aptFor(opts.arch, opts.aptListsRoot);
  const info = (await showPackages(apt, [BUSYBOX_PACKAGE])).get(BUSYBOX_PACKAGE);
  if (!info) throw new FailureError(`apt knows no package ${BUSYBOX_PACKAGE} for ${opts.arch}`, 'run "apt-get update" (with Debian main in the sources) and try again');
  const cached = await findVerified(opts.cache, 'sha256', info.sha256);
  const deb = cached ?? (await fetchDebs(apt, [info], opts.cache)).get(info.package)!;
  opts.log(`  ${info.package} ${info.version} (${info.arch}): ${cached ? 'cached' : 'downloaded'}, sha256 verified`);
  const busybox = await busyboxFrom(deb, opts.cache, `${info.package} ${info.version}`);
  const dir = imagesDir(opts.projectDir);
  mkdirSync(dir, { recursive: true });
  const archives = imageArchives(busybox, { version: info.version, arch: info.arch });
  if (opts.coredns) archives.push(await opts.coredns());
  const result: BuildImagesResult = { written: [], unchanged: [], busybox: info };
  for (const a of archives) {
    const file = join(dir, a.file);
    const rel = join('images', a.file);
    if (existsSync(file) && readFileSync(file).equals(a.data)) {
      result.unchanged.push(rel);
      continue;
    }
    writeAtomic(file, a.data, 0o644);
    result.written.push(rel);
  }
  return result;
}

/** The static busybox binary out of the .deb (dpkg -x into a temp dir in the cache). */
async function busyboxFrom(deb: string, cache: string, label: string): Promise<Buffer> {
  const temp = await cacheTempPath(cache, 'busybox');
  try {
    await extractDeb(deb, temp);
    const file = join(temp, 'bin', 'busybox');
    const st = await lstat(file).catch(() => undefined);
    if (!st?.isFile()) throw new FailureError(`Debian package ${label} has no regular file bin/busybox`);
    return await readFile(file);
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}
