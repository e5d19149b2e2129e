// cluster.yaml's etcd.snapshots (scheduled snapshots: off by default, every and keep) and
// preflight.ignore (names of preflight checks up skips): every key, and bad input refused with
// file and line: an interval that is not a duration or under a minute, keep under 1, a preflight
// name no check has (with the closest names).
import { describe, expect, it } from 'vitest';
import { defaultSettings, parseClusterSettings, parseDuration } from '../../src/cluster-settings.ts';
import { refusedSettings } from '../helpers/cluster-yaml.ts';

const refused = refusedSettings;

describe('cluster.yaml: etcd.snapshots', () => {
  it('is off by default; every and keep (5 unless given)', () => {
    expect(defaultSettings().etcd).toEqual({});
    expect(parseClusterSettings('etcd:\n  snapshots:\n    every: 12h\n', 'c').etcd.snapshots).toEqual({ every: '12h', everySeconds: 43200, keep: 5 });
    expect(parseClusterSettings('etcd:\n  snapshots:\n    every: 1m\n    keep: 2\n', 'c').etcd.snapshots).toEqual({ every: '1m', everySeconds: 60, keep: 2 });
    expect(parseDuration('1h30m')).toBe(5400);
    expect(parseDuration('1d')).toBe(86400);
    expect(parseDuration('90')).toBeUndefined();
  });

  it('refuses an interval that is not a duration, one under a minute, keep under 1 and a missing every, with file and line', () => {
    const notDuration = refused('etcd:\n  snapshots:\n    every: often\n');
    expect(notDuration.message).toBe('etcd.snapshots.every: expected a duration like 30m, 12h or 1d, got "often"');
    expect([notDuration.where?.file, notDuration.where?.line, notDuration.exitCode]).toEqual(['cluster.yaml', 3, 2]);
    const short = refused('etcd:\n  snapshots:\n    keep: 3\n    every: 30s\n');
    expect(short.message).toBe('etcd.snapshots.every: "30s" is shorter than a minute');
    expect(short.where?.line).toBe(4);
    const keep = refused('etcd:\n  snapshots:\n    every: 1h\n    keep: 0\n');
    expect(keep.message).toBe('etcd.snapshots.keep: expected a whole number from 1 to 1000, got 0');
    expect(keep.where?.line).toBe(4);
    expect(refused('etcd:\n  snapshots:\n    keep: 3\n').message).toContain('etcd.snapshots needs every');
    expect(refused('etcd:\n  snapshot:\n    every: 1h\n').message).toBe('unknown key "snapshot" under etcd');
  });
});

describe('cluster.yaml: preflight.ignore', () => {
  it('takes names of checks, or all', () => {
    expect(defaultSettings().preflight).toEqual({ ignore: [] });
    expect(parseClusterSettings('preflight:\n  ignore: [clock, etcd-disk]\n', 'c').preflight.ignore).toEqual(['clock', 'etcd-disk']);
    expect(parseClusterSettings('preflight:\n  ignore:\n    - all\n', 'c').preflight.ignore).toEqual(['all']);
  });

  it('refuses a name no check has, with its line and the closest name', () => {
    const e = refused('preflight:\n  ignore:\n    - clock\n    - port\n');
    expect(e.message).toBe('preflight.ignore: no preflight check is named "port"');
    expect(e.hint).toMatch(/^did you mean "ports"\? the checks: systemd, ports, /);
    expect([e.where?.file, e.where?.line, e.exitCode]).toEqual(['cluster.yaml', 4, 2]);
    expect(refused('preflight:\n  ignore: clock\n').message).toBe('preflight.ignore: expected a list of check names, got "clock"');
  });
});
