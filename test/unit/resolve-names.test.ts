// resolveNames answers as `getent hosts NAME` does, one name at a time, with one awk for every
// name that /etc/hosts holds: checked against glibc's rules on crafted files, and against the
// real getent on this machine's own /etc/hosts.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolvedAddresses, resolveNames } from '../../src/probes/names.ts';

const dir = mkdtempSync(join(tmpdir(), 'hardway-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function resolve(names: string[], hosts: string, nsswitch = 'hosts: files dns\n'): Map<string, string> {
  writeFileSync(join(dir, 'hosts'), hosts);
  writeFileSync(join(dir, 'nsswitch.conf'), nsswitch);
  const cmd = resolveNames(names, { hosts: join(dir, 'hosts'), nsswitch: join(dir, 'nsswitch.conf') });
  return resolvedAddresses(execFileSync('/bin/sh', ['-c', cmd.text], { encoding: 'utf8' }));
}

describe('resolveNames', () => {
  it('answers each name with the first line naming it, case-insensitively, skipping comments', () => {
    const hosts = '# 10.0.0.9 node-0\n127.0.1.1 node-0.k node-0\n10.0.0.1 node-0.k node-0 # pinned\n\t10.0.0.2\tNode-1.k   node-1\n';
    const got = resolve(['node-0', 'node-0.k', 'node-1', 'NODE-1.K'], hosts);
    expect(Object.fromEntries(got)).toEqual({ 'node-0': '127.0.1.1', 'node-0.k': '127.0.1.1', 'node-1': '10.0.0.2', 'NODE-1.K': '10.0.0.2' });
  });

  it('prefers an IPv6 line, as getent hosts asks for AF_INET6 first', () => {
    const got = resolve(['node-1'], '10.0.0.2 node-1\n::1 node-1\n');
    expect(got.get('node-1')).toBe('::1');
  });

  it('asks getent for a name /etc/hosts lacks, and for every name when nsswitch.conf does not ask files first', () => {
    // localhost is in this machine's real /etc/hosts (so getent answers it from there, no DNS
    // query leaves the machine), and not in the crafted one, or there under another address.
    const real = execFileSync('getent', ['hosts', 'localhost'], { encoding: 'utf8' }).split(/\s+/)[0];
    expect(real).toMatch(/^(127\.|::1)/);
    expect(resolve(['localhost'], '10.0.0.1 node-0\n').get('localhost')).toBe(real);
    expect(resolve(['localhost'], '10.0.0.1 localhost\n', 'hosts: dns files\n').get('localhost')).toBe(real);
    expect(resolve(['localhost'], '10.0.0.1 localhost\n', 'hosts: files dns\n').get('localhost')).toBe('10.0.0.1');
  });

  it("agrees with the real getent on this machine's /etc/hosts", () => {
    const names = [...new Set(readFileSync('/etc/hosts', 'utf8').split('\n').flatMap((l) => l.replace(/#.*/, '').trim().split(/\s+/).slice(1)).filter(Boolean))];
    expect(names.length).toBeGreaterThan(0);
    const got = resolvedAddresses(execFileSync('/bin/sh', ['-c', resolveNames(names).text], { encoding: 'utf8' }));
    for (const n of names) expect(got.get(n), n).toBe(execFileSync('getent', ['hosts', n], { encoding: 'utf8' }).split(/\s+/)[0]);
  });
});
