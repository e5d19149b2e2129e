// cluster.yaml `registries`: what is accepted, as what, and each mistake refused at load time with
// the file and the line of the offending key.
import { mkdtempSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseClusterSettings } from '../../src/cluster-settings.ts';
import { InputError } from '../../src/errors.ts';
import { registryDirName, registryOfDir, upstreamUrl } from '../../src/render/registries.ts';

const FIXTURE = join(import.meta.dirname, '../fixtures/registries');

/** A project directory holding the fixture CA, and cluster.yaml text parsed in it. */
function parse(text: string) {
  const dir = mkdtempSync(join(tmpdir(), 'hw-registries-'));
  copyFileSync(join(FIXTURE, 'mirror-ca.crt'), join(dir, 'mirror-ca.crt'));
  writeFileSync(join(dir, 'not-a-cert.pem'), '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n');
  return parseClusterSettings(text, join(dir, 'cluster.yaml'));
}

/** The InputError parse throws, as `line: message`. */
function refused(text: string): string {
  try {
    parse(text);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    return `${e.where?.line}: ${e.message}`;
  }
  throw new Error('accepted');
}

const one = (mirror: string) => `registries:\n  localhost:5001:\n    mirrors:\n      - ${mirror.split('\n').join('\n        ')}\n`;

describe('cluster.yaml registries', () => {
  it('is unset by default (nothing rendered, no config_path)', () => {
    expect(parse('apiPort: 6443\n').registries).toBeUndefined();
  });

  it('reads each registry\'s mirrors in order, with defaults filled in and the CA read from the project', () => {
    const s = parse([
      'registries:',
      '  localhost:5001:',
      '    mirrors:',
      '      - url: http://registry:5000/',
      '        plainHttp: true',
      '  docker.io:',
      '    mirrors:',
      '      - url: https://mirror.example.com:5443',
      '        ca: mirror-ca.crt',
      '        capabilities: [resolve, pull]',
      '      - url: https://10.240.0.5:5000',
      '        skipVerify: true',
      '        capabilities: [pull]',
      '  _default:',
      '    mirrors: [{url: "https://cache.example.com"}]',
    ].join('\n'));
    expect(Object.keys(s.registries!)).toEqual(['localhost:5001', 'docker.io', '_default']);
    expect(s.registries!['localhost:5001']!.mirrors).toEqual([{ url: 'http://registry:5000', plainHttp: true, skipVerify: false, capabilities: ['pull', 'resolve'] }]);
    const [withCa, skipping] = s.registries!['docker.io']!.mirrors;
    expect(withCa).toMatchObject({ url: 'https://mirror.example.com:5443', plainHttp: false, skipVerify: false, capabilities: ['pull', 'resolve'], ca: { file: 'mirror-ca.crt' } });
    expect(withCa!.ca!.pem).toContain('-----BEGIN CERTIFICATE-----');
    expect(skipping).toEqual({ url: 'https://10.240.0.5:5000', plainHttp: false, skipVerify: true, capabilities: ['pull'] });
  });

  it('an empty registries mapping is set: config_path stays on, and every registry directory hardway wrote goes', () => {
    expect(parse('registries: {}\n').registries).toEqual({});
  });

  it.each([
    ['registries: [docker.io]\n', '1: registries must be a mapping'],
    ['registries:\n  Docker.IO:\n    mirrors: [{url: "https://m.example"}]\n', '2: registries: "Docker.IO" is not a registry name'],
    ['registries:\n  https://docker.io:\n    mirrors: [{url: "https://m.example"}]\n', '2: registries: "https://docker.io" is not a registry name'],
    ['registries:\n  localhost:99999:\n    mirrors: [{url: "https://m.example"}]\n', '2: registries: "localhost:99999" is not a registry name'],
    ['registries:\n  docker.io:\n    mirror: [{url: "https://m.example"}]\n', '3: unknown key "mirror" under registries.docker.io'],
    ['registries:\n  docker.io: {}\n', '2: registries.docker.io has no mirrors'],
    ['registries:\n  docker.io:\n    mirrors: []\n', '3: registries.docker.io.mirrors must be a list of one or more mirrors'],
    [one('plainHttp: true'), '4: registries.localhost:5001.mirrors[0] has no url'],
    [one('url: ftp://registry:5000'), '4: registries.localhost:5001.mirrors[0].url: expected a URL like https://mirror.example.com:5000, got "ftp://registry:5000"'],
    [one('url: https://user@registry:5000'), '4: registries.localhost:5001.mirrors[0].url: https://***@registry:5000 carries a user name or password: refused'],
    [one('url: http://registry:5000'), '4: registries.localhost:5001.mirrors[0].url: http://registry:5000 is plain HTTP'],
    [one('url: https://registry:5000\nplainHttp: true'), '5: registries.localhost:5001.mirrors[0].plainHttp: true, but the url https://registry:5000 is https://'],
    [one('url: http://registry:5000\nplainHttp: yes'), '5: registries.localhost:5001.mirrors[0].plainHttp: expected true or false, got "yes"'],
    [one('url: http://registry:5000\nplainHttp: true\nskipVerify: true'), '6: registries.localhost:5001.mirrors[0].skipVerify: a plain HTTP mirror has no certificate to verify'],
    [one('url: http://registry:5000\nplainHttp: true\nca: mirror-ca.crt'), '6: registries.localhost:5001.mirrors[0].ca: a plain HTTP mirror has no certificate to check with a CA'],
    [one('url: https://registry:5000\nskipVerify: true\nca: mirror-ca.crt'), '6: registries.localhost:5001.mirrors[0].ca: skipVerify: true would ignore this CA'],
    [one('url: https://registry:5000\nca: missing.crt'), '5: registries.localhost:5001.mirrors[0].ca: missing.crt does not exist'],
    [one('url: https://registry:5000\nca: not-a-cert.pem'), '5: registries.localhost:5001.mirrors[0].ca: not-a-cert.pem holds a PRIVATE KEY (its line 1), not only certificates: refused, nothing of it goes to the machines'],
    [one('url: https://registry:5000\ncapabilities: [push]'), '5: registries.localhost:5001.mirrors[0].capabilities: expected a list of pull and/or resolve, each once, got ["push"]'],
    [one('url: https://registry:5000\ncapabilities: [pull, pull]'), '5: registries.localhost:5001.mirrors[0].capabilities: expected a list of pull and/or resolve, each once, got ["pull","pull"]'],
    [one('url: https://registry:5000\ncapabilities: []'), '5: registries.localhost:5001.mirrors[0].capabilities: expected a list of pull and/or resolve, each once, got []'],
    [one('url: https://registry:5000\nheaders: {}'), '5: unknown key "headers" under registries.localhost:5001.mirrors[0]'],
    [`${one('url: https://registry:5000')}      - url: https://registry:5000/\n`, '5: registries.localhost:5001.mirrors[1].url: https://registry:5000 is already registries.localhost:5001.mirrors[0]'],
  ])('refuses %j', (text, expected) => {
    expect(refused(text)).toBe(expected);
  });

  it('names the registry directory as containerd looks it up, and the upstream containerd would use', () => {
    expect(registryDirName('localhost:5001')).toBe('localhost_5001_');
    expect(registryOfDir('localhost_5001_')).toBe('localhost:5001');
    expect(registryDirName('docker.io')).toBe('docker.io');
    expect(registryDirName('_default')).toBe('_default');
    expect(registryOfDir('_default')).toBe('_default');
    expect(upstreamUrl('docker.io')).toBe('https://registry-1.docker.io');
    expect(upstreamUrl('localhost:5001')).toBe('http://localhost:5001');
    expect(upstreamUrl('registry.example.com:5000')).toBe('https://registry.example.com:5000');
    expect(upstreamUrl('_default')).toBeUndefined();
  });
});
