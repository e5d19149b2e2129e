// The pure rules of the offline CoreDNS build (src/images/coredns-recipe.ts): plugin.cfg cut to
// the cluster's plugins, the klog v1 import made v2, the GOPATH's moves, the cache key over every
// input; and the image (one layer, /coredns 0755, the ports) with whether a project needs it. The
// real build is in test/e2e/build-images.test.ts.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultSettings } from '../../src/cluster-settings.ts';
import { corednsImageArchive, whyNoCoredns } from '../../src/dns/coredns-image.ts';
import { buildKey, COREDNS_PLUGINS, cutPluginCfg, DEBIAN_GO_LIBRARIES, fixKlogImport, gopathPlan, type CorednsInputs } from '../../src/images/coredns-recipe.ts';
import { COREDNS_IMAGE } from '../../src/images/names.ts';
import { layoutHelpers } from '../helpers/oci-layout.ts';

const work = mkdtempSync(join(tmpdir(), 'hardway-coredns-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const { untar, listing, walkLayout } = layoutHelpers(work);

/** The head and a sample of CoreDNS v1.8.3's plugin.cfg (the real one lists 44 plugins). */
const PLUGIN_CFG = `# Directives are registered in the order they should be executed.
#
#     <plugin-name>:<package-name>
# log:github.com/coredns/coredns/plugin/log

metadata:metadata
cancel:cancel
reload:reload
ready:ready
health:health
pprof:pprof
prometheus:metrics
errors:errors
log:log
dnstap:dnstap
loadbalance:loadbalance
cache:cache
rewrite:rewrite
kubernetes:kubernetes
etcd:etcd
loop:loop
forward:forward
grpc:grpc
whoami:whoami
on:github.com/coredns/caddy/onevent
`;

describe('plugin.cfg cut to the cluster plugins', () => {
  it('keeps the comments and exactly the listed plugins, in the file order (the order of the plugin chain)', () => {
    const cut = cutPluginCfg(PLUGIN_CFG);
    const plugins = cut.split('\n').filter((l) => /^\w+:/.test(l));
    expect(plugins).toEqual(['reload:reload', 'ready:ready', 'health:health', 'prometheus:metrics', 'errors:errors', 'log:log',
      'loadbalance:loadbalance', 'cache:cache', 'kubernetes:kubernetes', 'loop:loop', 'forward:forward']);
    expect(plugins.map((p) => p.split(':')[0])).toEqual([...COREDNS_PLUGINS]);
    expect(cut).toContain('# log:github.com/coredns/coredns/plugin/log'); // a comment that looks like a plugin stays
    expect(cut).not.toMatch(/^(on|etcd|grpc|whoami|dnstap):/m);
  });

  it('refuses a plugin.cfg that lacks one of them (not the v1.8.3 source)', () => {
    expect(() => cutPluginCfg(PLUGIN_CFG.replace('loop:loop\n', ''))).toThrow(/plugin.cfg has no loop/);
  });
});

describe('klog import of plugin/kubernetes/setup.go', () => {
  const SETUP = '\t"k8s.io/client-go/tools/clientcmd"\n\t"k8s.io/klog"\n)\n\nfunc setup() {\n\tklog.SetOutput(os.Stdout)\n}\n';

  it('imports k8s.io/klog/v2 instead of v1, nothing else changed', () => {
    const fixed = fixKlogImport(SETUP);
    expect(fixed).toBe(SETUP.replace('\t"k8s.io/klog"\n', '\t"k8s.io/klog/v2"\n'));
    expect(fixed).toContain('klog.SetOutput(os.Stdout)');
  });

  it('refuses a file without the v1 import (already fixed, or another source)', () => {
    expect(() => fixKlogImport(fixKlogImport(SETUP))).toThrow(/does not import "k8s.io\/klog"/);
  });
});

describe('GOPATH plan', () => {
  const parts = {
    tree: 'src/kubernetes-1.20.2',
    vendorDirs: ['k8s.io', 'github.com', 'golang.org'],
    k8sLinks: { 'client-go': '../../staging/src/k8s.io/client-go', api: '../../staging/src/k8s.io/api' },
    libraries: DEBIAN_GO_LIBRARIES.slice(0, 2).map((library) => ({ library, unpacked: `debs/${library.package}` })),
    coredns: 'coredns-1.8.3',
  };

  it('moves vendor/, then staging/ over the k8s.io links, then the Debian libraries, then CoreDNS', () => {
    expect(gopathPlan(parts)).toEqual([
      { from: 'src/kubernetes-1.20.2/vendor/github.com', to: 'github.com' },
      { from: 'src/kubernetes-1.20.2/vendor/golang.org', to: 'golang.org' },
      { from: 'src/kubernetes-1.20.2/vendor/k8s.io', to: 'k8s.io' },
      { from: 'src/kubernetes-1.20.2/staging/src/k8s.io/api', to: 'k8s.io/api' },
      { from: 'src/kubernetes-1.20.2/staging/src/k8s.io/client-go', to: 'k8s.io/client-go' },
      { from: 'debs/golang-github-miekg-dns-dev/usr/share/gocode/src/github.com/miekg/dns', to: 'github.com/miekg/dns' },
      { from: 'debs/golang-github-opentracing-opentracing-go-dev/usr/share/gocode/src/github.com/opentracing/opentracing-go', to: 'github.com/opentracing/opentracing-go' },
      { from: 'coredns-1.8.3', to: 'github.com/coredns/coredns' },
    ]);
  });

  it('takes only promauto from the newer client_golang package', () => {
    const prom = DEBIAN_GO_LIBRARIES.find((l) => l.package === 'golang-github-prometheus-client-golang-dev')!;
    expect(gopathPlan({ ...parts, libraries: [{ library: prom, unpacked: 'debs/p' }] }).at(-2)).toEqual({
      from: 'debs/p/usr/share/gocode/src/github.com/prometheus/client_golang/prometheus/promauto', to: 'github.com/prometheus/client_golang/prometheus/promauto',
    });
  });

  it('refuses a k8s.io link that leaves the tree\'s staging/', () => {
    expect(() => gopathPlan({ ...parts, k8sLinks: { api: '../../../etc' } })).toThrow(/outside the tree's staging/);
  });
});

describe('cache key', () => {
  const inputs: CorednsInputs = {
    archiveSha256: 'a'.repeat(64), kubernetesDsc: 'b'.repeat(64),
    debs: [{ package: 'x-dev', version: '1-1', sha256: 'c'.repeat(64) }, { package: 'y-dev', version: '2-1', sha256: 'd'.repeat(64) }],
    caddySha256: 'e'.repeat(64), goVersion: 'go version go1.19.8 linux/amd64', plugins: COREDNS_PLUGINS, arch: 'amd64',
  };

  it('is the same for the same inputs, whatever order apt listed the packages in', () => {
    expect(buildKey(inputs)).toMatch(/^[0-9a-f]{64}$/);
    expect(buildKey({ ...inputs, debs: [...inputs.debs].reverse() })).toBe(buildKey(inputs));
  });

  it('changes with every input', () => {
    const changed: CorednsInputs[] = [
      { ...inputs, archiveSha256: 'f'.repeat(64) },
      { ...inputs, kubernetesDsc: 'f'.repeat(64) },
      { ...inputs, debs: [{ ...inputs.debs[0]!, sha256: 'f'.repeat(64) }, inputs.debs[1]!] },
      { ...inputs, debs: [{ ...inputs.debs[0]!, version: '1-2' }, inputs.debs[1]!] },
      { ...inputs, caddySha256: 'f'.repeat(64) },
      { ...inputs, goVersion: 'go version go1.19.9 linux/amd64' },
      { ...inputs, plugins: COREDNS_PLUGINS.filter((p) => p !== 'loop') },
      { ...inputs, plugins: [...COREDNS_PLUGINS].reverse() },
      { ...inputs, arch: 'arm64' },
    ];
    const keys = new Set([buildKey(inputs), ...changed.map(buildKey)]);
    expect(keys.size).toBe(changed.length + 1);
  });
});

describe('the CoreDNS image archive (pure: any binary bytes)', () => {
  const FAKE = Buffer.from('\x7fELF not really coredns\n'.repeat(100));
  const built = { arch: 'amd64', goVersion: 'go version go1.19.8 linux/amd64', archiveSha256: '0'.repeat(64) };

  it('is the same bytes when built twice, other bytes for another binary', () => {
    const a = corednsImageArchive(FAKE, built);
    expect(a.file).toBe('coredns.tar');
    expect(a.image).toBe(COREDNS_IMAGE);
    expect(sha(corednsImageArchive(Buffer.from(FAKE), { ...built }).data)).toBe(sha(a.data));
    expect(sha(corednsImageArchive(Buffer.concat([FAKE, Buffer.from('!')]), built).data)).not.toBe(sha(a.data));
  });

  it('has one layer holding only /coredns (0755, 0:0, the epoch), run as the entrypoint with DNS and metrics ports', () => {
    const a = corednsImageArchive(FAKE, built);
    const p = walkLayout(untar(a.data));
    expect(p.entry.annotations).toEqual({ 'io.containerd.image.name': COREDNS_IMAGE, 'org.opencontainers.image.ref.name': '1.8.3' });
    expect(p.config.config.Entrypoint).toEqual(['/coredns']);
    expect(p.config.config.ExposedPorts).toEqual({ '53/tcp': {}, '53/udp': {}, '9153/tcp': {} });
    expect(p.config.history[0].created_by).toContain('CoreDNS v1.8.3 source (sha256:' + '0'.repeat(64) + ') with go1.19.8 linux/amd64');
    const lines = listing(p.layer);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^-rwxr-xr-x 0\/0 +\d+ 1970-01-01 00:00:00 coredns$/);
    const rootfs = untar(p.layer);
    expect(readdirSync(rootfs)).toEqual(['coredns']);
    expect(readFileSync(join(rootfs, 'coredns')).equals(FAKE)).toBe(true);
    expect(lstatSync(join(rootfs, 'coredns')).mode & 0o777).toBe(0o755);
  });

  it('passes umoci: every blob verified, a bundle whose process is /coredns', () => {
    const layout = untar(corednsImageArchive(FAKE, built).data);
    const bundle = join(mkdtempSync(join(work, 'bundle-')), 'b');
    execFileSync('umoci', ['unpack', '--image', `${layout}:1.8.3`, bundle], { stdio: 'pipe' });
    const spec = JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8'));
    expect(spec.process.args).toEqual(['/coredns']);
    expect(readFileSync(join(bundle, 'rootfs/coredns')).equals(FAKE)).toBe(true);
  });
});

describe('whether build-images makes the CoreDNS image', () => {
  const k = (version: string, minor: number) => ({ version, minor, from: 'versions.kubernetes in cluster.yaml' });
  const dns = (d: Partial<ReturnType<typeof defaultSettings>['dns']>) => ({ dns: { ...defaultSettings().dns, ...d } });

  it('does for Kubernetes 1.20 (no upstream image pinned for it), or any release whose dns.image names hardway\'s', () => {
    expect(whyNoCoredns(dns({}), k('v1.20.2', 20))).toBeUndefined();
    expect(whyNoCoredns(dns({ image: COREDNS_IMAGE }), k('v1.32.3', 32))).toBeUndefined();
  });

  it('does not, saying why in one line: DNS off, another dns.image, or a release with an upstream image', () => {
    expect(whyNoCoredns(dns({ enabled: false }), k('v1.20.2', 20))).toBe('dns.enabled is false in cluster.yaml');
    expect(whyNoCoredns(dns({ image: 'registry.example/coredns:1.8.3' }), k('v1.20.2', 20))).toBe('the cluster runs registry.example/coredns:1.8.3 (dns.image in cluster.yaml)');
    expect(whyNoCoredns(dns({}), k('v1.32.3', 32))).toBe(
      'Kubernetes v1.32.3 (versions.kubernetes in cluster.yaml) runs the upstream registry.k8s.io/coredns/coredns:v1.11.3, which containerd pulls');
  });
});
