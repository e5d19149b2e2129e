// `hardway lab break SCENARIO [--node NAME]` and `hardway lab break --list`: the CLI face of src/lab/break/.
import { resolve } from 'node:path';
import { jsonOption, say, type CommandModule } from '../cli/command.ts';
import { reportLines } from '../cli/json-output.ts';
import { closest, didYouMean } from '../ui/suggest.ts';
import { InputError } from '../errors.ts';
import { listScenarios, labBreak } from '../lab/break/run.ts';
import { findScenario, SCENARIOS } from '../lab/break/scenarios.ts';
import { defaultLabPaths, DEFAULT_LAB } from '../lab/names.ts';
import { checkAccess } from './lab.ts';

/** `hardway lab break`. */
export const labBreakCommand: CommandModule = {
  name: 'lab break',
  args: 'SCENARIO | --list',
  details: [
    `Scenarios: ${SCENARIOS.map((s) => s.name).join(', ')} (--list says what each breaks and what you will see).`,
    'Nothing undoes a scenario but the fix "hardway doctor" names: run doctor, then exactly its fix.',
  ].join('\n'),
  options: {
    name: { type: 'string', arg: 'NAME', description: `the lab (default: the lab whose project is DIR, the only lab on this host, else "${DEFAULT_LAB}")` },
    dir: { type: 'string', arg: 'DIR', description: "a lab's project directory, to find the lab by (default: the current directory)" },
    node: { type: 'string', arg: 'NAME', description: 'the machine to break (default: the last worker)' },
    list: { type: 'boolean', description: 'list the scenarios: what each breaks and what a learner sees' },
    json: jsonOption('{ok, lines}, as printed without --json'),
  },
  examples: [
    ['hardway lab break --list', 'what each scenario breaks and what you will see'],
    ['sudo hardway lab break hosts-drift --node node-1', 'break node-1 of the lab of this directory; then run "hardway doctor"'],
  ],
  jsonFields: { lines: [] },
  run: (ctx) => reportLines(ctx, async ({ stdout, ...c }) => {
    if (c.values.list) {
      if (c.positionals.length) throw new InputError('--list takes no SCENARIO', 'hardway lab break --list');
      say(stdout, listScenarios().join('\n'));
      return 0;
    }
    const [scenario, ...rest] = c.positionals;
    if (!scenario || rest.length) throw new InputError('lab break takes exactly one SCENARIO', 'e.g. hardway lab break worker-down --node node-1; hardway lab break --list');
    if (!findScenario(scenario)) {
      const near = didYouMean(closest(scenario, SCENARIOS.map((s) => s.name)));
      throw new InputError(`unknown scenario "${scenario.slice(0, 40)}"`, `${near ? `${near} ` : ''}scenarios: ${SCENARIOS.map((s) => s.name).join(', ')} (hardway lab break --list)`);
    }
    checkAccess(c, 'lab break', true);
    const lines = await labBreak({ scenario, cwd: resolve(c.cwd, (c.values.dir as string | undefined) ?? '.'), lab: c.values.name as string | undefined, node: c.values.node as string | undefined },
      defaultLabPaths(c.env), { stream: c.values.json === true ? c.stderr : stdout, env: c.env });
    say(stdout, lines.join('\n'));
    return 0;
  }),
};
