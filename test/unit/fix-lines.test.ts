// The command lines doctor and the break scenarios suggest come from helpers over the command
// tables (fixes.ts: stepsFix/commandFix from the remote table, labLine/labMachineLine for the lab's
// commands), not from strings typed in each check.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/commands/index.ts';
import { fixText, LAB_VERBS, labLine, labMachineLine, PROJECT_COMMANDS, projectFix, stepsFix } from '../../src/doctor/fixes.ts';
import { SCENARIOS, scenarioFix } from '../../src/break/scenarios.ts';

const SRC = resolve(import.meta.dirname, '../../src');
const filesOf = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesOf(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));

describe('fix lines', () => {
  it("name only the lab's own commands", () => {
    const names = new Set(COMMANDS.map((c) => c.name));
    for (const verb of LAB_VERBS) expect(names.has(`lab ${verb}`)).toBe(true);
    expect(labMachineLine('start', 'node-1', 'demo')).toBe('hardway lab start node-1 --name demo');
    expect(labLine('up', 'demo', '--registry')).toBe('hardway lab up --name demo --registry');
  });

  it("name only the project's own commands, and print a fix's parts joined as a user types them", () => {
    const names = new Set(COMMANDS.map((c) => c.name));
    for (const command of PROJECT_COMMANDS) expect(names.has(command)).toBe(true);
    expect(fixText([...projectFix('build-images'), ...stepsFix(['images'], 'node-1')], ' --machines m.txt')).toBe('hardway build-images --machines m.txt && hardway images --node node-1 --machines m.txt');
    expect(fixText(null, '')).toBeNull();
  });

  it('a scenario fixed by starting its machine says the lab line of it', () => {
    const started = SCENARIOS.find((s) => 'lab' in s.doctor.fix)!;
    expect(scenarioFix(started, 'node-0', 'demo')).toBe('hardway lab start node-0 --name demo');
  });

  it('no string in src/doctor or src/break types a lab command or --node by hand', () => {
    const typed = [...filesOf(join(SRC, 'doctor')), ...filesOf(join(SRC, 'break'))].flatMap((file) =>
      readFileSync(file, 'utf8').split('\n').map((line, i) => ({ where: `${file.slice(SRC.length + 1)}:${i + 1}`, line }))
        .filter(({ line }) => !/^\s*(\/\/|\*|\/\*\*)/.test(line))
        .filter(({ line }) => /['"`][^'"`]*(hardway lab (up|start|stop|reboot)\b|hardway [a-z-]+ [^'"`]*--node\b)/.test(line))
        .map(({ where }) => where));
    expect(typed).toEqual([]);
  });
});
