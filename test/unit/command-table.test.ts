// The command lines derived from the command table: the smallest command that runs the steps, with
// --only where it has more, --node when on one machine; what doctor and the break scenarios print.
import { describe, expect, it } from 'vitest';
import { commandFor, commandLine, REMOTE_COMMANDS, remoteEntry, stepNames, type RemoteCommandEntry } from '../../src/command-table.ts';
import { SCENARIOS, scenarioFix } from '../../src/break/scenarios.ts';

/** What a line `hardway COMMAND [--only STEP]... [--node NAME]` runs, read back from the command table. */
function whatRuns(line: string): { entry: RemoteCommandEntry; runs: string[]; node?: string } {
  const m = /^hardway ([a-z-]+)((?: --only [a-z-]+)*)(?: --node (\S+))?$/.exec(line);
  if (!m) throw new Error(`not a command line of the table: ${line}`);
  const entry = remoteEntry(m[1]!);
  return { entry, runs: m[2] ? m[2].split(' --only ').slice(1) : stepNames(entry.steps), node: m[3] };
}

describe('command lines from the command table', () => {
  it('the smallest command that runs the steps, --only where it runs more, --node for one machine', () => {
    expect(commandFor(['cni'], { node: 'node-1' })).toBe('hardway bootstrap-workers --only cni --node node-1');
    expect(commandFor(['containerd', 'kubelet'], { node: 'node-0' })).toBe('hardway bootstrap-workers --only containerd --only kubelet --node node-0');
    expect(commandFor(['distribute'], { node: 'node-0' })).toBe('hardway distribute --node node-0');
    // A command named after the step runs its follow-ups with it (kubelet-rbac after the control plane).
    expect(commandFor(['bootstrap-control-plane'], { node: 'server' })).toBe('hardway bootstrap-control-plane --node server');
    // Steps of two commands: the one that has both.
    expect(commandFor(['kubelet', 'dns'])).toBe('hardway up --only kubelet --only dns');
    expect(commandFor(['dns'], { node: 'server', extra: ' --machines x/machines.txt' })).toBe('hardway dns --node server --machines x/machines.txt');
  });

  it('never suggests a command that destroys or is scoped by its arguments, and knows only its own commands', () => {
    expect(() => commandFor(['reset'])).toThrow('no command runs reset');
    expect(() => commandFor(['drain-node'])).toThrow('no command runs drain-node');
    expect(() => commandLine('instal')).toThrow('no remote command "instal"');
    expect(commandLine('up', { node: 'node-0' })).toBe('hardway up --node node-0');
  });

  it("every break scenario's fix, as doctor must print it: the smallest command of the table that runs exactly its steps, on the machine it broke", () => {
    for (const s of SCENARIOS) {
      const line = scenarioFix(s, s.labMachine, 'dev');
      const fix = s.doctor.fix;
      if ('lab' in fix) {
        expect(line, s.name).toBe(`hardway lab ${fix.lab} ${s.labMachine} --name dev`);
        continue;
      }
      const { entry, runs, node } = whatRuns(line);
      // Nothing destroyed, nothing chosen by arguments: the fix runs as printed.
      expect(entry.confirm ?? entry.scope, line).toBeUndefined();
      expect(runs.filter((step) => fix.steps.some((f) => f === step)), line).toEqual(fix.steps);
      // More than its steps only from a command named after its one step, which brings that step's follow-ups.
      if (runs.length > fix.steps.length) expect([entry.name], line).toEqual(fix.steps);
      expect(node, line).toBe(fix.everywhere ? undefined : s.labMachine);
      const smaller = REMOTE_COMMANDS.filter((c) => !c.confirm && !c.scope && stepNames(c.steps).length < stepNames(entry.steps).length);
      expect(smaller.filter((c) => fix.steps.every((step) => stepNames(c.steps).includes(step))).map((c) => c.name), line).toEqual([]);
    }
  });
});
