// `hardway lab break SCENARIO [--node NAME]` and `hardway lab break --list`: the CLI face of src/lab/break/.
import { say, type CliCommand } from '../cli/command.ts';
import { InputError } from '../errors.ts';
import { listScenarios, labBreak } from '../lab/break/run.ts';
import { SCENARIOS } from '../lab/break/scenarios.ts';
import { defaultLabPaths, DEFAULT_LAB } from '../lab/names.ts';

/** `hardway lab break`. */
export const labBreakCommand: CliCommand = {
  name: 'lab break',
  summary: 'Break a healthy lab machine on purpose (a real fault), for hardway doctor to find',
  args: 'SCENARIO',
  details: [
    `Scenarios: ${SCENARIOS.map((s) => s.name).join(', ')} (--list says what each breaks and what you will see).`,
    'Nothing undoes a scenario but the fix "hardway doctor" names: run doctor, then exactly its fix.',
  ].join('\n'),
  options: {
    name: { type: 'string', arg: 'NAME', description: `the lab (default: the lab of the current directory, the only lab on this host, else "${DEFAULT_LAB}")` },
    node: { type: 'string', arg: 'NAME', description: 'the machine to break (default: the last worker)' },
    list: { type: 'boolean', description: 'list the scenarios: what each breaks and what a learner sees' },
  },
  async run(ctx) {
    if (ctx.values.list) {
      if (ctx.positionals.length) throw new InputError('--list takes no SCENARIO', 'hardway lab break --list');
      say(ctx.stdout, listScenarios().join('\n'));
      return 0;
    }
    const [scenario, ...rest] = ctx.positionals;
    if (!scenario || rest.length) throw new InputError('lab break takes exactly one SCENARIO', 'e.g. hardway lab break worker-down --node node-1; hardway lab break --list');
    const lines = await labBreak({ scenario, cwd: ctx.cwd, lab: ctx.values.name as string | undefined, node: ctx.values.node as string | undefined },
      defaultLabPaths(ctx.env), { stream: ctx.stdout, env: ctx.env });
    say(ctx.stdout, lines.join('\n'));
    return 0;
  },
};
