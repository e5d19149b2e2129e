// `hardway doctor`: the CLI face of src/doctor/ (options, the SSH connector, exit codes).
import { INVENTORY_OPTIONS, jsonOption, machinesFile, projectArgs, SSH_OPTIONS, type CommandModule } from '../cli/command.ts';
import { hostConnector, ONE_ATTEMPT } from '../transport/index.ts';
import { runDoctor } from '../doctor/run.ts';
import { CHECK_LIST } from '../doctor/checks/index.ts';
import { checkBundlePlace } from '../doctor/bundle.ts';
import { InputError, quote } from '../errors.ts';
import { checkIdentityFiles } from '../transport/auth.ts';
import { shownTransport, sshOptions } from './ssh-options.ts';
import { defaultLabPaths } from '../lab/names.ts';
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ClusterApi } from '../cluster-api/cluster-api.ts';

/** An image reference as doctor passes it to ctr (no blanks, no shell words; sh quotes it anyway). */
const IMAGE = /^[a-z0-9][a-z0-9._\-/:@]*$/i;

/** `hardway doctor`. */
export const doctorCommand: CommandModule = {
  name: 'doctor',
  details: [
    'Asks the API (kubectl with pki/jumpbox.kubeconfig) for the nodes and the pods that do not start, and',
    'every machine what the checks below look at, in one read-only SSH round trip each; in the same round',
    'trip every step of "hardway up" plans, read-only: what a plan would change is a drift finding.',
    'Changes nothing on any machine (--accept-new-host-keys writes known_hosts here).',
    '',
    // From the registry, so that a new check is listed here by being registered.
    'Checks, in the order of the report (most likely cause first):',
    ...CHECK_LIST.map((c) => `- ${c.name}: ${c.looks}`),
    '',
    'Each finding: machine, check, cause, evidence (command and line) and the hardway command that fixes it.',
    '--bundle FILE.tar.gz also writes a support bundle (one more read-only round trip per machine): see',
    'docs/troubleshooting.md; no file of pki/, key, token or kubeconfig goes into it.',
    'Exit codes: 0 no problem found, 1 problems found, 2 usage or input error.',
  ].join('\n'),
  options: {
    ...INVENTORY_OPTIONS,
    node: { type: 'string', multiple: true, arg: 'NAME', description: 'only this machine (its hostname in machines.txt)' },
    json: jsonOption('{ok, findings: [{machine, check, cause, evidence, fix}]}'),
    'pull-image': {
      type: 'string', multiple: true, arg: 'IMAGE', formerly: 'image',
      description: 'test-pull this image on every worker (default: images pods run from mirrored registries, or the lab registry\'s)',
    },
    bundle: {
      type: 'string', arg: 'FILE',
      description: 'also write a support bundle (FILE.tar.gz, not inside pki/) to attach to a bug report: this report, nodes, pods, events, and per machine services, journals, checksums of installed files, routes, configs; no secret',
    },
    force: { type: 'boolean', description: 'with --bundle: replace a file already at FILE (without it, an existing file is refused)' },
    ...SSH_OPTIONS,
  },
  examples: [
    ['hardway doctor', 'what is wrong with the cluster of this directory, with the command that fixes each problem'],
    ['hardway doctor --node node-1 -v', 'only node-1, showing each connection and remote command'],
    ['hardway doctor --pull-image localhost:5001/hardway/web:1 --json', 'test-pull that image through the mirrors; one JSON object'],
    ['hardway doctor --bundle doctor-bundle.tar.gz', 'the report, and a support bundle to attach to a bug report (no key, token or kubeconfig in it)'],
  ],
  jsonFields: { findings: [] },
  async run(ctx) {
    const images = ctx.values['pull-image'] as string[] | undefined;
    for (const i of images ?? []) {
      // 255 characters at most, as containerd (and cluster.yaml's sandboxImage) take them: a longer value is never echoed whole.
      if (i.length > 255 || !IMAGE.test(i)) throw new InputError(`--pull-image ${quote(i)} is not an image reference`, 'e.g. --pull-image localhost:5001/hardway/web:1 (at most 255 characters)');
    }
    checkIdentityFiles(ctx.values.identity as string[] | undefined, ctx.cwd);
    const bundle = ctx.values.bundle as string | undefined;
    const force = ctx.values.force === true;
    if (force && bundle === undefined) throw new InputError('--force replaces the file of --bundle FILE, and there is none', 'pass --bundle FILE.tar.gz too, or leave --force out');
    if (bundle !== undefined) checkBundleFile(bundle, ctx.cwd, dirname(machinesFile(ctx)), force);
    const { code } = await runDoctor({
      machinesFile: machinesFile(ctx),
      projectArgs: projectArgs(ctx),
      nodes: ctx.values.node as string[] | undefined,
      images,
      json: ctx.values.json === true,
      env: ctx.env,
      stdout: ctx.stdout,
      labPaths: defaultLabPaths(ctx.env),
      clusterApi: (inv) => ClusterApi.forRun(inv, { warn: (line) => ctx.stderr.write(`warning: ${line}\n`) }),
      ...(bundle !== undefined ? { bundle: { file: resolve(ctx.cwd, bundle), stderr: ctx.stderr, cwd: ctx.cwd, force } } : {}),
      // One attempt, briefly: a machine that does not answer is a finding, not something to wait for.
      connect: (inv) => {
        const connect = hostConnector(inv, { ...sshOptions(ctx, inv), ...ONE_ATTEMPT });
        return async (host) => shownTransport(ctx, await connect(host), host.name);
      },
    });
    return code;
  },
};

/**
 * --bundle FILE: a file name ending in .tar.gz, in a directory that exists, not inside pki/, and no
 * file already there unless --force (checked before any machine is asked).
 */
function checkBundleFile(file: string, cwd: string, projectDir: string, force: boolean): void {
  if (!file.endsWith('.tar.gz') || file.endsWith('/')) throw new InputError(`--bundle ${quote(file)} is not a .tar.gz file name`, 'e.g. --bundle doctor-bundle.tar.gz');
  const dir = dirname(resolve(cwd, file));
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputError(`--bundle ${quote(file)}: directory ${quote(dir)} does not exist`, 'make it first, or name a file in an existing directory');
  checkBundlePlace({ file: resolve(cwd, file), projectDir, cwd, force });
}
