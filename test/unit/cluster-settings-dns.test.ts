// cluster.yaml's dns section: defaults (on, the 10th address of the service CIDR, the image that
// fits the Kubernetes release), every key, and bad input refused with file and line (exit 2 from
// the CLI, nothing written): an address outside the service CIDR or the API Service's, an image
// that is not a reference, a source that is neither a path nor an http(s) URL.
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultSettings, parseClusterSettings } from '../../src/cluster-settings.ts';
import { corednsImage, usesOfflineCoredns } from '../../src/dns/image.ts';
import { InputError } from '../../src/errors.ts';
import { COREDNS_IMAGE } from '../../src/images/names.ts';
import { parseInventory } from '../../src/inventory.ts';
import { runCli } from '../helpers/cli.ts';
import { refusedSettings } from '../helpers/cluster-yaml.ts';

const MACHINES = '10.240.0.10 server.kubernetes.local server\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24\n';
const inventoryWith = (yaml: string) => parseInventory(MACHINES, parseClusterSettings(yaml, 'cluster.yaml'), { file: '/p/machines.txt', dir: '/p', clusterFile: '/p/cluster.yaml' });
const refused = refusedSettings;

describe('cluster.yaml: dns', () => {
  it('is on by default, at the 10th address of the service CIDR', () => {
    expect(defaultSettings().dns).toEqual({ enabled: true });
    expect(inventoryWith('').clusterDnsIp).toBe('10.32.0.10');
    expect(inventoryWith('serviceCidr: 10.96.0.0/12\n').clusterDnsIp).toBe('10.96.0.10');
    expect(inventoryWith('serviceCidr: 10.32.0.16/28\n').clusterDnsIp).toBe('10.32.0.26');
  });

  it('takes every key', () => {
    const s = parseClusterSettings('dns:\n  enabled: true\n  clusterIP: 10.32.0.53\n  image: registry.example/coredns:1.2\n  source: ../coredns-1.8.3.tar.gz\n', 'cluster.yaml');
    expect(s.dns).toEqual({ enabled: true, clusterIP: '10.32.0.53', image: 'registry.example/coredns:1.2', source: '../coredns-1.8.3.tar.gz' });
    expect(parseClusterSettings('dns:\n  source: https://example.org/coredns-1.8.3.tar.gz\n', 'c').dns.source).toBe('https://example.org/coredns-1.8.3.tar.gz');
    expect(inventoryWith('dns:\n  clusterIP: 10.32.0.53\n').clusterDnsIp).toBe('10.32.0.53');
  });

  it('picks the CoreDNS image per Kubernetes release: offline for 1.20, kubeadm\'s for the others, dns.image above all', () => {
    const s = defaultSettings();
    expect(corednsImage(s, 20)).toBe(COREDNS_IMAGE);
    expect(corednsImage(s, 32)).toBe('registry.k8s.io/coredns/coredns:v1.11.3');
    expect(corednsImage(s, 28)).toBe('registry.k8s.io/coredns/coredns:v1.10.1');
    expect(usesOfflineCoredns(s, 20)).toBe(true);
    expect(usesOfflineCoredns(s, 32)).toBe(false);
    expect(usesOfflineCoredns({ dns: { enabled: false } }, 20)).toBe(false);
    expect(corednsImage({ dns: { enabled: true, image: 'mirror.local/coredns:v1.11.3' } }, 32)).toBe('mirror.local/coredns:v1.11.3');
  });

  it('refuses a cluster DNS address outside the service CIDR, its network, broadcast or API Service address, with the line', () => {
    for (const [yaml, line, says] of [
      ['dns:\n  clusterIP: 10.33.0.10\n', 2, 'lies outside the service CIDR 10.32.0.0/24'],
      ['dns:\n  clusterIP: 10.32.0.1\n', 2, 'is the kubernetes API Service address'],
      ['dns:\n  clusterIP: 10.32.0.0\n', 2, 'is the network address'],
      ['dns:\n  clusterIP: 10.32.0.255\n', 2, 'is the broadcast address'],
      ['dns:\n  clusterIP: 10.32.0.10\nserviceCidr: 10.96.0.0/12\n', 3, 'lies outside the service CIDR 10.96.0.0/12'],
    ] as const) {
      const e = refused(yaml);
      expect(e).toBeInstanceOf(InputError);
      expect(e.message).toContain(says);
      expect(e.where?.line, yaml).toBe(line);
      expect(e.hint).toMatch(/pick a free address inside/);
    }
  });

  it('refuses a value that is not an address, an image reference, a boolean, or a path or URL', () => {
    expect(refused('dns:\n  clusterIP: ten\n').message).toContain('dns.clusterIP: expected an IPv4 address');
    expect(refused('dns:\n  image: "Not An Image!"\n').message).toContain('dns.image: expected an image reference');
    expect(refused('dns:\n  enabled: yes please\n').message).toContain('dns.enabled: expected true or false');
    expect(refused('dns:\n  source: "a file; rm -rf /"\n').message).toContain('dns.source: expected a file path or an http(s) URL');
    expect(refused('dns:\n  replicas: 3\n').message).toContain('unknown key "replicas" under dns');
  });

  it('the CLI exits 2 with file and line and writes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hardway-dns-'));
    writeFileSync(join(dir, 'machines.txt'), MACHINES);
    writeFileSync(join(dir, 'cluster.yaml'), 'keyAlgorithm: ecdsa-p256\ndns:\n  clusterIP: 10.32.0.1\n');
    for (const args of [['inventory'], ['certs'], ['up', '--dry-run']]) {
      const r = await runCli(args, dir);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain('cluster.yaml:3');
      expect(r.stderr).toContain('dns.clusterIP 10.32.0.1 is the kubernetes API Service address');
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    writeFileSync(join(dir, 'cluster.yaml'), 'dns:\n  image: "coredns:1:2"\n');
    const bad = await runCli(['inventory'], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('cluster.yaml:2');
    expect(readdirSync(dir).sort()).toEqual(['cluster.yaml', 'machines.txt']);
  });
});
