// The filter table as `iptables -S` prints it, what drops pod traffic in it (the pod-forwarding
// step's plan and doctor's judgement), and doctor's verdict with its evidence line.
import { describe, expect, it } from 'vitest';
import { podTrafficDropped } from '../../src/doctor/forwarding.ts';
import { dropsPodTraffic, forwardState, parseFilterTable } from '../../src/net/pod-forwarding.ts';

const CIDR = '10.200.0.0/16';
/** What a worker's `iptables -S` printed after `hardway up` (kube-proxy's chains shortened), then Docker's. */
const KUBE = [
  '-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
  '-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
  '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
];
const OURS = ['-N HARDWAY-FORWARD', '-A HARDWAY-FORWARD -s 10.200.0.0/16 -j ACCEPT', '-A HARDWAY-FORWARD -d 10.200.0.0/16 -j ACCEPT'];
const table = (policy: string, lines: string[]) => parseFilterTable(['-P INPUT ACCEPT', `-P FORWARD ${policy}`, '-P OUTPUT ACCEPT', '-N KUBE-FORWARD', ...lines].join('\n') + '\n');

describe('the filter table of `iptables -S`', () => {
  it('reads policies, chains (empty ones too) and their rules in order', () => {
    const t = table('DROP', ['-N DOCKER-USER', '-A FORWARD -j DOCKER-USER', '-A FORWARD -j HARDWAY-FORWARD', ...KUBE, ...OURS]);
    expect(t.available).toBe(true);
    expect(t.policies.get('FORWARD')).toBe('DROP');
    expect(t.chains.get('DOCKER-USER')).toEqual([]);
    expect(t.chains.get('FORWARD')!.slice(0, 2)).toEqual(['-j DOCKER-USER', '-j HARDWAY-FORWARD']);
    expect(forwardState(t, CIDR)).toEqual({ policy: 'DROP', jumps: 1, dropsBefore: [], chainExists: true, chainRules: ['-s 10.200.0.0/16 -j ACCEPT', '-d 10.200.0.0/16 -j ACCEPT'] });
  });

  it('a failed `iptables -S` (no iptables yet) is unavailable and has no chain', () => {
    const t = parseFilterTable('', 127);
    expect(t.available).toBe(false);
    expect(forwardState(t, CIDR)).toMatchObject({ jumps: 0, chainExists: false, policy: undefined });
  });
});

describe('which rules drop pod traffic', () => {
  it.each([
    ['-j DROP', true],
    ['-j REJECT --reject-with icmp-port-unreachable', true],
    ['-s 10.200.3.0/24 -j DROP', true],
    ['-d 10.0.0.0/8 -j DROP', true],
    ['-i eth1 -p tcp -m tcp --dport 80 -j DROP', true],
    ['! -s 10.1.0.0/16 -j DROP', true],
    ['-d 192.0.2.7/32 -j DROP', false],
    ['-s 10.200.0.0/16 -d 192.0.2.7/32 -j DROP', false],
    ['-m conntrack --ctstate INVALID -j DROP', false],
    ['-s 10.200.0.0/16 -j ACCEPT', false],
    ['-j DOCKER-USER', false],
  ])('%s: %s', (rule, drops) => {
    expect(dropsPodTraffic(rule, CIDR)).toBe(drops);
  });
});

describe("doctor's verdict: is pod traffic dropped, and the line that shows it", () => {
  it('policy DROP as Docker leaves it, with hardway\'s jump first: not dropped', () => {
    expect(podTrafficDropped(table('DROP', ['-N DOCKER-USER', '-A FORWARD -j HARDWAY-FORWARD', '-A FORWARD -j DOCKER-USER', ...KUBE, ...OURS]), CIDR)).toBeUndefined();
  });

  it('policy ACCEPT without the jump: not dropped (the step still plans the jump)', () => {
    expect(podTrafficDropped(table('ACCEPT', KUBE), CIDR)).toBeUndefined();
  });

  it('policy DROP without the jump: dropped, the policy line as evidence', () => {
    expect(podTrafficDropped(table('DROP', ['-N DOCKER-USER', '-A FORWARD -j DOCKER-USER', ...KUBE, ...OURS]), CIDR)).toEqual({
      cause: "FORWARD's policy is DROP and pod traffic (10.200.0.0/16) has no rule of its own (no jump to HARDWAY-FORWARD): kube-proxy accepts only replies to connections already made",
      evidence: 'iptables -S FORWARD: -P FORWARD DROP',
    });
  });

  it('policy DROP with the jump but a chain that accepts another CIDR: dropped', () => {
    const stale = ['-N HARDWAY-FORWARD', '-A HARDWAY-FORWARD -s 10.99.0.0/16 -j ACCEPT'];
    expect(podTrafficDropped(table('DROP', ['-A FORWARD -j HARDWAY-FORWARD', ...KUBE, ...stale]), CIDR)?.cause).toContain('HARDWAY-FORWARD does not accept 10.200.0.0/16');
  });

  it('a DROP rule for the pod network before the jump: dropped, that rule as evidence', () => {
    expect(podTrafficDropped(table('ACCEPT', ['-A FORWARD -s 10.200.0.0/16 -j DROP', '-A FORWARD -j HARDWAY-FORWARD', ...KUBE, ...OURS]), CIDR)).toEqual({
      cause: 'FORWARD drops pod traffic (10.200.0.0/16) before its jump to HARDWAY-FORWARD',
      evidence: 'iptables -S FORWARD: -A FORWARD -s 10.200.0.0/16 -j DROP (before -A FORWARD -j HARDWAY-FORWARD)',
    });
  });

  it('a REJECT of everything and no jump: dropped, whatever the policy', () => {
    expect(podTrafficDropped(table('ACCEPT', ['-A FORWARD -j REJECT --reject-with icmp-host-prohibited']), CIDR)?.evidence).toBe('iptables -S FORWARD: -A FORWARD -j REJECT --reject-with icmp-host-prohibited');
  });

  it('a DROP of one outside host before the jump, or an unreadable table: not dropped', () => {
    expect(podTrafficDropped(table('DROP', ['-A FORWARD -d 192.0.2.7/32 -j DROP', '-A FORWARD -j HARDWAY-FORWARD', ...OURS]), CIDR)).toBeUndefined();
    expect(podTrafficDropped(parseFilterTable('', 127), CIDR)).toBeUndefined();
  });
});
