// `hardway download`: the binaries the cluster machines need, verified, in downloads/.
import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { INVENTORY_OPTIONS, jsonOption, machinesFile, projectNamed, say, type CommandModule, type CliContext } from '../cli/command.ts';
import { reportLines } from '../cli/json-output.ts';
import { loadClusterSettings } from '../cluster-settings.ts';
import { InputError } from '../errors.ts';
import { displayPath, statPath } from '../input-file.ts';
import { hostArch, parseArch } from '../download/arch.ts';
import { cacheDir } from '../download/cache.ts';
import { downloadFromDebian } from '../download/debian.ts';
import type { InstallSummary } from '../download/install.ts';
import { downloadsDir } from '../download/layout.ts';
import { createProgress } from '../download/progress.ts';
import { downloadReleases } from '../download/release.ts';
import { BUILTIN_VERSIONS_FILE } from '../download/versions.ts';

/** The `hardway download` command. */
export const downloadCommand: CommandModule = {
  name: 'download',
  details: [
    '--source release (default): the release files of the versions pinned in cluster.yaml, each verified',
    'against its published digest (src/download/versions.json) before use, cached in',
    '${XDG_CACHE_HOME:-~/.cache}/hardway/downloads, unpacked into downloads/{client,controller,worker,cni-plugins}.',
    '',
    '--source debian: for machines without internet access, the binaries Debian packages carry (older versions,',
    'verified by apt), and the Kubernetes server binaries built from Debian\'s kubernetes source package',
    '(v1.20.2, verified against the signed index; several minutes the first time, then cached in',
    '${XDG_CACHE_HOME:-~/.cache}/hardway/kubernetes-build; needs golang-go, make, rsync, jq, gcc).',
    '',
    'Environment: HARDWAY_DOWNLOAD_BASE_URL serves every URL as BASE/HOST/PATH (a mirror);',
    'HARDWAY_VERSIONS_FILE replaces the versions manifest.',
  ].join('\n'),
  options: {
    source: { type: 'string', arg: 'release|debian', default: 'release', choices: ['release', 'debian'], description: 'where the binaries come from' },
    arch: { type: 'string', arg: 'amd64|arm64', description: "the machines' architecture (default: this machine's)" },
    ...INVENTORY_OPTIONS,
    json: jsonOption('{ok, lines}, as printed without --json; the progress goes to stderr'),
  },
  examples: [
    ['hardway download', 'the release binaries of the versions in cluster.yaml (needs internet access)'],
    ['hardway download --source debian', "offline-friendly: Debian's packages, and Kubernetes v1.20.2 built from Debian's source"],
    ['hardway download --arch arm64 --dir my-cluster', 'for arm64 machines, into my-cluster/downloads/'],
  ],
  jsonFields: { lines: [] },
  run: (ctx) => reportLines(ctx, download),
};

/** `hardway download` once its options are read. */
async function download(ctx: CliContext): Promise<number> {
  const { values, env, stdout, stderr } = ctx;
  const source = String(values.source);
  if (source !== 'release' && source !== 'debian') {
    throw new InputError(`--source ${source} is not known`, 'use --source release or --source debian');
  }
  const arch = typeof values.arch === 'string' ? parseArch(values.arch) : await hostArch();
  const machines = machinesFile(ctx);
  const hint = 'pass --dir DIR of your project (downloads/ goes into it)';
  if (!existsSync(machines) && projectNamed(ctx)) throw new InputError(`${displayPath(machines)} not found`, hint);
  if (statPath(machines, displayPath(machines), hint)?.isDirectory()) throw new InputError(`${displayPath(machines)} is a directory, not a file`, hint);
  const projectDir = dirname(machines);
  const cache = cacheDir(env);
  const log = (line: string) => say(stdout, line);
  say(stdout, `hardway download: ${source === 'release' ? 'release files' : 'Debian packages'} for ${arch} into ${downloadsDir(projectDir)}`);
  let summary: InstallSummary;
  if (source === 'release') {
    const settings = loadClusterSettings(join(projectDir, 'cluster.yaml'));
    summary = await downloadReleases({
      projectDir,
      arch,
      versions: settings.versions,
      ...(settings.checksums ? { checksums: settings.checksums } : {}),
      versionsFile: env.HARDWAY_VERSIONS_FILE ? resolve(ctx.cwd, env.HARDWAY_VERSIONS_FILE) : BUILTIN_VERSIONS_FILE,
      baseUrl: env.HARDWAY_DOWNLOAD_BASE_URL || undefined,
      cache,
      progress: createProgress(stderr as NodeJS.WriteStream),
      log,
    });
  } else {
    summary = await downloadFromDebian({ projectDir, arch, cache, aptListsRoot: join(dirname(cache), 'apt-lists'), log });
  }
  report(summary, projectDir, ctx.cwd, log);
  return 0;
}

function report(s: InstallSummary, projectDir: string, cwd: string, log: (line: string) => void): void {
  const where = relative(cwd, downloadsDir(projectDir)) || '.';
  log(`${where}: ${s.installed.length} installed, ${s.unchanged.length} unchanged${s.removed.length ? `, ${s.removed.length} removed (${s.removed.join(', ')})` : ''}`);
  for (const p of s.installed) log(`  installed ${p}`);
  if (s.manifest.missing.length > 0) {
    log('');
    log(`Not provided by ${s.manifest.source === 'debian' ? 'any Debian package' : 'this source'} (the machines will not get these):`);
    for (const m of s.manifest.missing) log(`  - ${m}`);
    log('They come with "hardway download --source release" on a machine with internet access.');
  }
}
