// `hardway lab break SCENARIO [--node NAME]` and `hardway lab break --list`: the CLI face of src/break/.
import { resolve } from 'node:path';
import { jsonOption, needsYes, say, yesOption, type CommandModule } from '../cli/command.ts';
import { reportLines } from '../cli/json-output.ts';
import { closest, didYouMean } from '../suggest.ts';
import { InputError } from '../errors.ts';
import { listScenarios, labBreak } from '../break/run.ts';
import { findScenario, SCENARIOS } from '../break/scenarios.ts';
import { defaultLabPaths, DEFAULT_LAB } from '../lab/names.ts';
import { checkAccess } from './lab.ts';

/** `hardway lab break`. */
export const labBreakCommand: CommandModule = {
  name: 'lab break',
  args: 'SCENARIO | --list',
  details: [
    `Scenarios: ${SCENARIOS.map((s) => s.name).join(', ')} (--list says what each breaks and what you will see).`,
    'Nothing undoes a scenario but the fix "hardway doctor" names: run doctor, then exactly its fix.',
    'It runs only with --yes (--dry-run says which machine it would break, and how).',
  ].join('\n'),
  options: {
    name: { type: 'string', arg: 'NAME', description: `the lab (default: the lab whose project is DIR, the only lab on this host, else "${DEFAULT_LAB}")` },
    dir: { type: 'string', arg: 'DIR', description: "a lab's project directory, to find the lab by (default: the current directory)" },
    node: { type: 'string', arg: 'NAME', description: 'the machine to break (default: the last worker)' },
    list: { type: 'boolean', description: 'list the scenarios: what each breaks and what a learner sees' },
    'dry-run': { type: 'boolean', description: 'say which machine it would break and how; change nothing' },
    yes: yesOption('a machine of the lab is broken on purpose (only doctor\'s fix undoes it)'),
    json: jsonOption('{ok, lines}, as printed without --json'),
  },
  examples: [
    ['hardway lab break --list', 'what each scenario breaks and what you will see'],
    ['sudo hardway lab break hosts-drift --node node-1 --dry-run', 'what it would break on node-1, changing nothing'],
    ['sudo hardway lab break hosts-drift --node node-1 --yes', 'break node-1 of the lab of this directory; then run "hardway doctor"'],
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
    const dryRun = c.values['dry-run'] === true;
    if (dryRun && c.values.yes === true) throw new InputError('--dry-run and --yes together', 'give --dry-run to see what it would break, --yes to break it');
    // Before root is checked: the first thing to know is that it breaks a cluster on purpose.
    if (!dryRun && c.values.yes !== true) {
      const where = typeof c.values.node === 'string' ? c.values.node : 'the last worker';
      throw needsYes(c, 'lab break', `would break ${where} of the lab on purpose (${scenario}): ${findScenario(scenario)!.breaks}; only the fix "hardway doctor" names undoes it`, { root: true });
    }
    checkAccess(c, 'lab break', true);
    const lines = await labBreak({
      scenario, cwd: resolve(c.cwd, (c.values.dir as string | undefined) ?? '.'), lab: c.values.name as string | undefined, node: c.values.node as string | undefined,
      dryRun,
    },
      defaultLabPaths(c.env), { stream: c.values.json === true ? c.stderr : stdout, env: c.env });
    say(stdout, lines.join('\n'));
    return 0;
  }),
};
