// The command lines derived from the command table: the smallest command that runs the steps, with
// --only where it has more, --node when on one machine; what doctor and the break scenarios print.
import { describe, expect, it } from 'vitest';
import { commandFor, commandLine } from '../../src/command-table.ts';
import { SCENARIOS, scenarioFix } from '../../src/break/scenarios.ts';

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

  it("every break scenario's fix, as doctor must print it", () => {
    expect(Object.fromEntries(SCENARIOS.map((s) => [s.name, scenarioFix(s, s.roles.includes('worker') ? 'node-1' : 'server', 'dev')]))).toEqual({
      'worker-down': 'hardway lab start node-1 --name dev',
      'hosts-drift': 'hardway pin-hosts --node node-1',
      'mirror-missing': 'hardway bootstrap-workers --only containerd --node node-1',
      'routes-missing': 'hardway routes --node node-1',
      'netfilter-off': 'hardway bootstrap-workers --only worker-os --node node-1',
      'docker-forward': 'hardway bootstrap-workers --only pod-forwarding --node node-1',
      'containerd-stopped': 'hardway bootstrap-workers --only containerd --only kubelet --node node-1',
      'cni-config-missing': 'hardway bootstrap-workers --only cni --node node-1',
      'sandbox-image-missing': 'hardway images --node node-1',
      'cni-plugin-missing': 'hardway bootstrap-workers --only cni --node node-1',
      'cert-expired': 'hardway distribute --node node-1',
      'dns-loop': 'hardway up --only kubelet --only dns',
      'dns-down': 'hardway dns --node server',
    });
  });
});
