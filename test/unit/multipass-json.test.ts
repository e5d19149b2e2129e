// Multipass's JSON, read by hardway and printed by the test stand-in, against real samples kept in
// test/fixtures/multipass/samples (their sources in the README there): Multipass 1.16.3's own
// formatter goldens, a 2018 capture (state RUNNING) and the development branch's shape with zones.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FailureError } from '../../src/errors.ts';
import { isDeleted, isRunning, parseInfo, parseList } from '../../src/multipass/json.ts';
import { infoEntry, infoJson, listJson, qtJson } from '../fixtures/multipass/stand-in/format.ts';

const sample = (name: string) => readFileSync(join(import.meta.dirname, '../fixtures/multipass/samples', name), 'utf8');

describe('parsing multipass info --format json', () => {
  it('a running VM with two addresses: both, the management address first', () => {
    const info = parseInfo(sample('info-v1.16.3-two-addresses.json'));
    expect([...info.values()]).toEqual([{ name: 'foo', state: 'Running', ipv4: ['10.168.32.2', '200.3.123.29'], release: 'Ubuntu 16.04.3 LTS' }]);
  });

  it('a running VM with one address and a stopped one with none', () => {
    const info = parseInfo(sample('info-v1.16.3-running-and-stopped.json'));
    expect(info.get('bogus-instance')).toMatchObject({ state: 'Running', ipv4: ['10.21.124.56'] });
    expect(info.get('bombastic')).toEqual({ name: 'bombastic', state: 'Stopped', ipv4: [] });
    expect(isRunning(info.get('bombastic')!.state)).toBe(false);
  });

  it('a 2018 capture, whose states were upper case', () => {
    const vm = parseInfo(sample('info-2018-snapcraft-capture.json')).get('announceable-rodney')!;
    expect(vm.ipv4).toEqual(['10.74.70.141']);
    expect(isRunning(vm.state)).toBe(true);
  });

  it('the development branch\'s shape (zone, devices, unsorted keys) reads the same', () => {
    const info = parseInfo(sample('info-dev-zones.json'));
    expect([...info.values()].map((i) => `${i.name} ${i.state} ${i.ipv4.join(',') || '-'}`)).toEqual(['bogus-instance Running 10.21.124.56', 'bombastic Stopped -']);
  });

  it('"N/A" (multipassd\'s word for no known address) and empty strings are no address', () => {
    const text = qtJson({ errors: [], info: { vm: { state: 'Running', ipv4: ['N/A'] }, vm2: { state: 'Running', ipv4: ['', '10.0.0.5', '10.0.0.5'] } } });
    const info = parseInfo(text);
    expect(info.get('vm')!.ipv4).toEqual([]);
    expect(info.get('vm2')!.ipv4).toEqual(['10.0.0.5']);
  });

  it('snapshot-only entries (info --snapshots) are not instances', () => {
    expect(parseInfo(qtJson({ errors: [], info: { a: { snapshots: { s1: { parent: '' } } } } })).size).toBe(0);
  });

  it('says what is wrong with output it does not understand, as a failure (exit 1)', () => {
    expect(() => parseInfo('info failed: cannot connect to the multipass socket')).toThrow(FailureError);
    expect(() => parseInfo('info failed: x')).toThrow(/not its JSON: "info failed: x"/);
    expect(() => parseInfo('{"errors": []}')).toThrow(/no "info" object/);
    expect(() => parseInfo('{"info": {"a": {"ipv4": []}}}')).toThrow(/info\.a: no "state"/);
    expect(() => parseInfo('{"info": {"a": {"state": "Running", "ipv4": "10.0.0.1"}}}')).toThrow(/"ipv4" is not an array/);
  });
});

describe('parsing multipass list --format json', () => {
  it('1.16.3\'s golden and the development shape', () => {
    for (const f of ['list-v1.16.3.json', 'list-dev-zones.json']) {
      expect(parseList(sample(f)).map((i) => `${i.name} ${i.state} ${i.ipv4.join(',') || '-'} ${i.release}`))
        .toEqual(['bogus-instance Running 10.21.124.56 Ubuntu 16.04 LTS', 'bombastic Stopped - Ubuntu 18.04 LTS']);
    }
    expect(isDeleted('Deleted')).toBe(true);
    expect(() => parseList('{"info": {}}')).toThrow(/no "list" array/);
  });
});

describe('the test stand-in prints what Multipass 1.16.3 prints, byte for byte', () => {
  it('info: the goldens re-serialised from their own data are identical (sorted keys, 4 spaces, empty containers)', () => {
    for (const f of ['info-v1.16.3-two-addresses.json', 'info-v1.16.3-running-and-stopped.json', 'list-v1.16.3.json']) {
      expect(qtJson(JSON.parse(sample(f)))).toBe(sample(f));
    }
  });

  it('info and list built from instance views match the goldens', () => {
    const running = {
      name: 'bogus-instance', state: 'Running', imageHash: '1797c5c82016c1e65f4008fcf89deae3a044ef76087a9ec5b907c6d64a3609ac',
      imageRelease: '16.04 LTS', snapshotCount: 1, ipv4: ['10.21.124.56'],
      runtime: { release: 'Ubuntu 16.04.3 LTS', cpuCount: '4', load: [0.03, 0.1, 0.15], diskUsed: '1932735284', diskTotal: '6764573492', memoryUsed: 38797312, memoryTotal: 1610612736 },
    };
    const stopped = { name: 'bombastic', state: 'Stopped', imageHash: 'ab5191cc172564e7cc0eafd397312a32598823e645279c820f0935393aead509', imageRelease: '18.04 LTS', snapshotCount: 3, ipv4: [] };
    const golden = JSON.parse(sample('info-v1.16.3-running-and-stopped.json')) as { info: Record<string, Record<string, unknown>> };
    // The golden's running VM has a mount; the stand-in has none, everything else is the same.
    expect({ ...infoEntry(running), mounts: golden.info['bogus-instance']!.mounts }).toEqual(golden.info['bogus-instance']);
    expect(infoEntry(stopped)).toEqual(golden.info.bombastic);
    expect(infoJson([stopped])).toBe(qtJson({ errors: [], info: { bombastic: golden.info.bombastic } }));
    expect(listJson([running, stopped])).toBe(sample('list-v1.16.3.json'));
  });
});
