// `hardway render`: writes each machine's rendered files into a local tree laid out as on the
// machine, so a user can read (or diff) exactly what the steps would install.
import { resolve } from 'node:path';
import { INVENTORY_OPTIONS, jsonOption, machinesFile, say, type CommandModule } from '../cli/command.ts';
import { reportLines } from '../cli/json-output.ts';
import { InputError } from '../errors.ts';
import { displayPath } from '../input-file.ts';
import { writeFilesInside } from '../output-file.ts';
import { loadInventory, selectMachines } from '../inventory.ts';
import { renderMachine } from '../render/machine.ts';
import { kubernetesToRender } from '../steps/support/kubernetes-version.ts';
import { containerdRenderOptions } from '../steps/support/worker-render.ts';

/** Renders the selected machines' files into DIR/<hostname>/<path on the machine>. */
export const renderCommand: CommandModule = {
  name: 'render',
  details: [
    'Writes OUT/<hostname>/<absolute path on the machine> with the file modes the steps install.',
    'Existing files in OUT are overwritten; files that are no longer rendered are not removed.',
    'etc/hosts.hardway-block and etc/cloud/templates/hosts.debian.tmpl.hardway-block hold the marked',
    'block of machine names that the pin-hosts step merges into /etc/hosts and cloud-init\'s hosts',
    'template (replacing an earlier block, keeping every other line); they are not installed as files.',
    'Worker files use the containerd in downloads/ (else the version in cluster.yaml), as',
    'bootstrap-workers does, and /etc/resolv.conf (the step uses systemd-resolved\'s file where it runs).',
    'Every file fits the Kubernetes release of the server binaries in downloads/ (else versions.kubernetes',
    'in cluster.yaml), as the steps do; the first line says which release and where it came from.',
  ].join('\n'),
  options: {
    ...INVENTORY_OPTIONS,
    node: { type: 'string', multiple: true, arg: 'NAME', description: 'render only this machine (its hostname in machines.txt)' },
    out: { type: 'string', arg: 'OUT', description: 'directory to write the trees into (required)' },
    json: jsonOption('{ok, lines}: the release rendered for, then one line per machine'),
  },
  examples: [
    ['hardway render --out rendered', "write every machine's files under rendered/<hostname>/"],
    ['hardway render --out rendered --node node-0', 'only node-0'],
  ],
  jsonFields: { lines: [] },
  run: (ctx) => reportLines(ctx, async (c) => {
    const { values, stdout, cwd } = c;
    if (typeof values.out !== 'string' || values.out === '') {
      throw new InputError('--out OUT is required', 'e.g. "hardway render --out rendered" writes rendered/<hostname>/...');
    }
    const inv = loadInventory(machinesFile(c));
    const machines = selectMachines(inv, values.node as string[] | undefined);
    const out = resolve(cwd, values.out);
    // Render everything before writing anything, so a template error leaves DIR untouched.
    const kubernetes = kubernetesToRender(inv);
    const opts = { ...containerdRenderOptions(inv), kubernetes };
    const rendered = machines.map((m) => ({ machine: m, files: renderMachine(inv, m, opts) }));
    // One write of every tree: no link inside DIR is followed (each one is refused before anything
    // is written), directories are made 0755 at most, and each file gets its exact mode.
    const root = { dir: out, dirMode: 0o755, hint: `hardway render writes only into directories and files of its own under ${displayPath(out)}, never through a link: remove the link, or choose another --out` };
    writeFilesInside(root, rendered.flatMap(({ machine, files }) =>
      files.map((f) => ({ path: `${machine.hostname}/${f.path.replace(/^\/+/, '')}`, content: f.content, mode: f.mode }))));
    say(stdout, `Kubernetes ${kubernetes.version} (from ${kubernetes.from})`);
    for (const { machine, files } of rendered) say(stdout, `${machine.hostname}: ${files.length} files in ${resolve(out, machine.hostname)}`);
    return 0;
  }),
};
