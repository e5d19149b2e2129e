// The pure rules of pin-hosts: block placement, the 127.0.1.1 rule, cloud-init template choice.
import { describe, expect, it } from 'vitest';
import { cloudInitFacts, pinLoopbackName, placeBlock } from '../../src/steps/pin-hosts-text.ts';
import { HOSTS_MARKERS } from '../../src/layout.ts';
import { hostsBlock } from '../../src/render/hosts.ts';
import { DEBIAN_OS_RELEASE } from '../fixtures/fake-transport.ts';
import { inventoryOf } from './engine.helpers.ts';

const inv = inventoryOf();
const BLOCK = hostsBlock(inv);
const node0 = inv.machines[1]!;

describe('placeBlock', () => {
  it('puts the block before the first address line, after comments and headers', () => {
    expect(placeBlock('# comment\n\n127.0.0.1 localhost\n', BLOCK, HOSTS_MARKERS)).toBe(`# comment\n\n${BLOCK}127.0.0.1 localhost\n`);
    expect(placeBlock('## template:jinja\n{% if x %}\n127.0.0.1 {{fqdn}}\n{% endif %}\n', BLOCK, HOSTS_MARKERS)).toBe(`## template:jinja\n${BLOCK}{% if x %}\n127.0.0.1 {{fqdn}}\n{% endif %}\n`);
    expect(placeBlock('::1 localhost\n', BLOCK, HOSTS_MARKERS)).toBe(`${BLOCK}::1 localhost\n`);
  });

  it('appends to a file without address lines, and creates an empty one', () => {
    expect(placeBlock('# only a comment\n', BLOCK, HOSTS_MARKERS)).toBe(`# only a comment\n${BLOCK}`);
    expect(placeBlock('', BLOCK, HOSTS_MARKERS)).toBe(BLOCK);
  });

  it('is idempotent and keeps exactly one block', () => {
    const once = placeBlock('127.0.0.1 localhost\n', BLOCK, HOSTS_MARKERS);
    expect(placeBlock(once, BLOCK, HOSTS_MARKERS)).toBe(once);
    expect(placeBlock(once + BLOCK, BLOCK, HOSTS_MARKERS)).toBe(once);
  });

  it('refuses a block with template syntax (it would not survive cloud-init rendering)', () => {
    const bad = BLOCK.replace('server.kubernetes.local', '{{fqdn}}');
    expect(() => placeBlock('', bad, HOSTS_MARKERS)).toThrow(/template syntax/);
  });
});

describe('pinLoopbackName (the 127.0.1.1 rule)', () => {
  const rule = (text: string) => pinLoopbackName(text, node0, inv);
  it('leaves a missing 127.0.1.1 line missing (the block maps the names to the permanent IP)', () => {
    expect(rule('127.0.0.1 localhost\n')).toBe('127.0.0.1 localhost\n');
  });
  it('keeps a line that names this machine, with any FQDN', () => {
    for (const l of ['127.0.1.1 node-0', '127.0.1.1 node-0.kubernetes.local node-0', '127.0.1.1\tnode-0.localdomain node-0 # cloud-init']) {
      expect(rule(`${l}\n`)).toBe(`${l}\n`);
    }
  });
  it('rewrites a stale name or another cluster machine\'s name, once', () => {
    expect(rule('127.0.1.1 debian\n')).toBe('127.0.1.1 node-0.kubernetes.local node-0\n');
    expect(rule('127.0.1.1 node-0 node-1\n')).toBe('127.0.1.1 node-0.kubernetes.local node-0\n');
    expect(rule('127.0.1.1 old\n127.0.1.1 older\n')).toBe('127.0.1.1 node-0.kubernetes.local node-0\n');
  });
});

describe('cloudInitFacts', () => {
  it('takes the distro from cloud.cfg, else os-release ID, else ID_LIKE, mapped to the template family', () => {
    expect(cloudInitFacts('system_info:\n   distro: ubuntu\n', DEBIAN_OS_RELEASE).family).toBe('debian');
    expect(cloudInitFacts('', 'ID="rocky"\nID_LIKE="rhel centos fedora"\n').family).toBe('redhat');
    expect(cloudInitFacts('', 'ID=something\nID_LIKE="suse opensuse"\n').family).toBe('suse');
    expect(cloudInitFacts('system_info:\n  distro: rhel\n', DEBIAN_OS_RELEASE).family).toBe('redhat');
  });
  it('reads manage_etc_hosts with the last setting winning (user-data is read last)', () => {
    expect(cloudInitFacts('manage_etc_hosts: true\n', '').managesHosts).toBe(true);
    expect(cloudInitFacts('manage_etc_hosts: True\nmanage_etc_hosts: false\n', '').managesHosts).toBe(false);
    expect(cloudInitFacts("manage_etc_hosts: 'localhost'\n", '').managesHosts).toBe(true);
    expect(cloudInitFacts('  manage_etc_hosts: true\n', '').managesHosts).toBe(false);
    expect(cloudInitFacts('', '').managesHosts).toBe(false);
  });
});
