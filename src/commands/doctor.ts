// `hardway doctor`: the CLI face of src/doctor/ (options, the SSH connector, exit codes).
import { resolve } from 'node:path';
import { INVENTORY_OPTIONS, type CliCommand } from '../cli/command.ts';
import { hostConnector, ONE_ATTEMPT } from '../transport/index.ts';
import { sshOptions } from './ssh-options.ts';
import { runDoctor } from '../doctor/run.ts';
import { InputError, quote } from '../errors.ts';
import { checkIdentityFiles } from '../transport/auth.ts';
import { defaultLabPaths } from '../lab/names.ts';

/** An image reference as doctor passes it to ctr (no blanks, no shell words; sh quotes it anyway). */
const IMAGE = /^[a-z0-9][a-z0-9._\-/:@]*$/i;

/** `hardway doctor`. */
export const doctorCommand: CliCommand = {
  name: 'doctor',
  summary: 'Explain what is wrong with the cluster, most likely cause first, and the command that fixes it (read-only)',
  details: [
    'Asks the API (kubectl with pki/jumpbox.kubeconfig) for the nodes, and every machine, in one read-only',
    'SSH round trip each: SSH answer, names and cloud-init\'s hosts template, services and their journal,',
    'CNI config, certificates (expiry, CA, names), bridge netfilter and forwarding, pod routes, registry',
    'hosts.toml and a test pull through the mirrors that bypasses the node\'s image cache. Changes nothing.',
    'Each finding: machine, check, cause, evidence (command and line) and the hardway command that fixes it.',
    'Exit codes: 0 no problem found, 1 problems found, 2 usage or input error.',
  ].join('\n'),
  options: {
    ...INVENTORY_OPTIONS,
    json: { type: 'boolean', description: 'print one JSON object {ok, findings: [{machine, check, cause, evidence, fix}]}' },
    image: { type: 'string', multiple: true, arg: 'IMAGE', description: 'test-pull this image on every worker (default: images pods run from mirrored registries, or the lab registry\'s)' },
    identity: { type: 'string', short: 'i', multiple: true, arg: 'FILE', description: 'private key to offer first' },
  },
  jsonFields: { findings: [] },
  async run(ctx) {
    const images = ctx.values.image as string[] | undefined;
    for (const i of images ?? []) {
      // 255 characters at most, as containerd (and cluster.yaml's sandboxImage) take them: a longer value is never echoed whole.
      if (i.length > 255 || !IMAGE.test(i)) throw new InputError(`--image ${quote(i)} is not an image reference`, 'e.g. --image localhost:5001/hardway/web:1 (at most 255 characters)');
    }
    checkIdentityFiles(ctx.values.identity as string[] | undefined, ctx.cwd);
    const machines = ctx.values.machines as string;
    const { code } = await runDoctor({
      machinesFile: resolve(ctx.cwd, machines),
      projectArgs: machines === 'machines.txt' ? '' : ` --machines ${machines}`,
      images,
      json: ctx.values.json === true,
      env: ctx.env,
      stdout: ctx.stdout,
      labPaths: defaultLabPaths(ctx.env),
      // One attempt, briefly: a machine that does not answer is a finding, not something to wait for.
      connect: (inv) => hostConnector(inv, { ...sshOptions(ctx, inv), ...ONE_ATTEMPT }),
    });
    return code;
  },
};
