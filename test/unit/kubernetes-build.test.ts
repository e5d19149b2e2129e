// The pure parts of building Kubernetes from Debian's source package: which upstream version a
// Debian version carries, and the Sources index entry (files and SHA-256) apt-cache showsrc prints.
import { describe, expect, it } from 'vitest';
import { parseSourceStanzas } from '../../src/download/apt-source.ts';
import { upstreamVersion } from '../../src/download/kubernetes-source.ts';

const SHOWSRC = `Package: kubernetes
Binary: kubernetes-client
Version: 1.20.5+really1.20.2-1.1+deb12u1
Build-Depends: debhelper (>= 12~), bash-completion, golang-go, jq, rsync
Files:
 0ff16343f03275e286ea9b19c140b158 1973 kubernetes_1.20.5+really1.20.2-1.1+deb12u1.dsc
Checksums-Sha256:
 19fa1da5aefcef673894ac9511986bd98a14410cf8eea0b626613c30df435257 1973 kubernetes_1.20.5+really1.20.2-1.1+deb12u1.dsc
 b83c0780efb182d928dc63d46488a847f161f04e40a94b96bf5247dd671ecdfc 34428927 kubernetes_1.20.5+really1.20.2.orig.tar.gz
 9b6e5fd41769d2b5badf2e73b274e3bcd90f85e13d06a1a4a845ccce018127d8 21300 kubernetes_1.20.5+really1.20.2-1.1+deb12u1.debian.tar.xz
Homepage: http://kubernetes.io/
Directory: pool/main/k/kubernetes

Package: other
Version: 1.0-1
`;

describe('Kubernetes from Debian source', () => {
  it('reads the upstream version a Debian version carries, "really" versions included', () => {
    expect(upstreamVersion('1.20.5+really1.20.2-1.1+deb12u1')).toBe('v1.20.2');
    expect(upstreamVersion('1.28.4-2')).toBe('v1.28.4');
    expect(upstreamVersion('1:1.30.1+ds-1')).toBe('v1.30.1');
    expect(() => upstreamVersion('unstable')).toThrow(/cannot read an upstream version/);
  });

  it('takes each file and its SHA-256 from the Sources index, the .dsc identifying the source', () => {
    const [pkg, ...rest] = parseSourceStanzas(SHOWSRC);
    expect(rest).toEqual([]); // a stanza without checksums is not a usable source
    expect(pkg!.package).toBe('kubernetes');
    expect(pkg!.version).toBe('1.20.5+really1.20.2-1.1+deb12u1');
    expect(pkg!.dsc).toEqual({ sha256: '19fa1da5aefcef673894ac9511986bd98a14410cf8eea0b626613c30df435257', size: 1973, name: 'kubernetes_1.20.5+really1.20.2-1.1+deb12u1.dsc' });
    expect(pkg!.files.map((f) => f.name)).toEqual([
      'kubernetes_1.20.5+really1.20.2-1.1+deb12u1.dsc', 'kubernetes_1.20.5+really1.20.2.orig.tar.gz', 'kubernetes_1.20.5+really1.20.2-1.1+deb12u1.debian.tar.xz',
    ]);
    expect(pkg!.files[1]!.size).toBe(34428927);
  });
});
