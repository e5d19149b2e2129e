// `hardway build-images`: the pause and web images of an offline cluster, as OCI archives in
// images/ beside machines.txt, where `hardway images` loads them from.
import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { INVENTORY_OPTIONS, say, type CliCommand } from '../cli/command.ts';
import { InputError } from '../errors.ts';
import { hostArch, parseArch } from '../download/arch.ts';
import { cacheDir } from '../download/cache.ts';
import { buildImages } from '../images/build.ts';
import { imagesDir, PAUSE_IMAGE, WEB_IMAGE } from '../images/names.ts';

/** The `hardway build-images` command. */
export const buildImagesCommand: CliCommand = {
  name: 'build-images',
  summary: "Build the pause and web images offline from Debian's busybox-static into images/",
  details: [
    `images/pause.tar (${PAUSE_IMAGE}: sleeps, the pod sandbox image) and`,
    `images/web.tar (${WEB_IMAGE}: busybox httpd on port 80), each an OCI image archive that`,
    '`ctr images import` loads and "hardway images" puts on every worker. Their only binary is',
    "/bin/busybox from Debian's busybox-static, fetched with apt-get download and verified against",
    'the apt index (cached in ${XDG_CACHE_HOME:-~/.cache}/hardway/downloads). A rebuild gives the',
    'same bytes: fixed times, owner 0:0, sorted entries, no compression; archives already right are',
    'left untouched.',
  ].join('\n'),
  options: {
    arch: { type: 'string', arg: 'amd64|arm64', description: "the machines' architecture (default: this machine's)" },
    ...INVENTORY_OPTIONS,
  },
  async run({ values, cwd, env, stdout }) {
    const arch = typeof values.arch === 'string' ? parseArch(values.arch) : await hostArch();
    const machines = resolve(cwd, String(values.machines));
    if (!existsSync(machines) && values.machines !== INVENTORY_OPTIONS.machines!.default) {
      throw new InputError(`${String(values.machines)} not found`, 'pass --machines FILE of your project (images/ goes beside it)');
    }
    const projectDir = dirname(machines);
    const cache = cacheDir(env);
    const log = (line: string) => say(stdout, line);
    const where = relative(cwd, imagesDir(projectDir)) || '.';
    say(stdout, `hardway build-images: ${PAUSE_IMAGE} and ${WEB_IMAGE} for ${arch} into ${where}`);
    const r = await buildImages({ projectDir, arch, cache, aptListsRoot: join(dirname(cache), 'apt-lists'), log });
    for (const f of r.written) log(`  written ${relative(cwd, join(projectDir, f)) || f}`);
    for (const f of r.unchanged) log(`  unchanged ${relative(cwd, join(projectDir, f)) || f}`);
    log(`${where}: ${r.written.length} written, ${r.unchanged.length} unchanged`);
    return 0;
  },
};
