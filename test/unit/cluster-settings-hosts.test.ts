// cluster.yaml keys for what real kubelets need on hosts that restrict them: sandboxImage,
// containerd.restrictOomScoreAdj, kubeProxy.conntrackMaxPerCore. Bad values name file and line.
import { describe, expect, it } from 'vitest';
import { defaultSettings, parseClusterSettings } from '../../src/cluster-settings.ts';
import { formatError, InputError } from '../../src/errors.ts';

const error = (text: string): string => {
  try {
    parseClusterSettings(text, 'cluster.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return formatError(e as InputError);
  }
  throw new Error('no error');
};

describe('cluster.yaml: sandboxImage, containerd, kubeProxy', () => {
  it('defaults leave all three to the components (nothing rendered)', () => {
    const s = defaultSettings();
    expect(s.sandboxImage).toBeUndefined();
    expect(s.containerd).toEqual({ restrictOomScoreAdj: false });
    expect(s.kubeProxy).toEqual({});
    expect(parseClusterSettings('apiPort: 6443\n', 'cluster.yaml')).toEqual(s);
  });

  it('takes each key', () => {
    const s = parseClusterSettings([
      'sandboxImage: registry.k8s.io/pause:3.6',
      'containerd:',
      '  restrictOomScoreAdj: true',
      'kubeProxy:',
      '  conntrackMaxPerCore: 0',
    ].join('\n'), 'cluster.yaml');
    expect(s).toMatchObject({ sandboxImage: 'registry.k8s.io/pause:3.6', containerd: { restrictOomScoreAdj: true }, kubeProxy: { conntrackMaxPerCore: 0 } });
    expect(parseClusterSettings('kubeProxy:\n  conntrackMaxPerCore: 131072\n', 'cluster.yaml').kubeProxy.conntrackMaxPerCore).toBe(131072);
  });

  it('accepts the image references containerd does', () => {
    for (const ref of [
      'pause', 'pause:3.6', 'registry.k8s.io/pause:3.10', 'localhost:5000/pause:3.6', 'mirror.example.com/k8s/pause_x-y:v3.6-rc.1',
      `registry.k8s.io/pause@sha256:${'a'.repeat(64)}`, `registry.k8s.io/pause:3.6@sha256:${'0'.repeat(64)}`,
    ]) {
      expect(parseClusterSettings(`sandboxImage: "${ref}"\n`, 'cluster.yaml').sandboxImage).toBe(ref);
    }
  });

  it('a bad image reference is an error at its line', () => {
    for (const ref of ['Registry.k8s.io/Pause:3.6', 'pause:', 'registry.k8s.io/pause:3.6 x', 'pause\'s', '"quoted"', '/pause', 'pause@sha256:abc']) {
      const msg = error(`apiPort: 6443\nsandboxImage: ${JSON.stringify(ref)}\n`);
      expect(msg).toMatch(/^error: cluster\.yaml:2: sandboxImage: expected an image reference like registry\.k8s\.io\/pause:3\.6, got /);
    }
    expect(error('sandboxImage: 3\n')).toContain('cluster.yaml:1: sandboxImage: expected an image reference');
  });

  it('bad values and unknown keys in the sections are errors at their line', () => {
    expect(error('containerd:\n  restrictOomScoreAdj: yes please\n')).toBe(
      'error: cluster.yaml:2: containerd.restrictOomScoreAdj: expected true or false, got "yes please"');
    expect(error('kubeProxy:\n\n  conntrackMaxPerCore: -1\n')).toBe(
      'error: cluster.yaml:3: kubeProxy.conntrackMaxPerCore: expected a whole number from 0 to 2147483647, got -1');
    expect(error('kubeProxy:\n  conntrackMaxPerCore: 1.5\n')).toContain('cluster.yaml:2: kubeProxy.conntrackMaxPerCore: expected a whole number');
    expect(error('containerd:\n  sandboxImage: pause:3.6\n')).toMatch(
      /^error: cluster\.yaml:2: unknown key "sandboxImage" under containerd\n\s+hint: known keys: restrictOomScoreAdj$/);
    expect(error('kubeProxy: 0\n')).toContain('cluster.yaml:1: kubeProxy must be a mapping');
  });
});
