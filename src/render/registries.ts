// containerd's registry host directories, one per registry of cluster.yaml's `registries`:
// certs.d/<registry>/hosts.toml with the mirrors in order (and the CA of each mirror that has one),
// following containerd's hosts.toml rules. containerd reads them at each pull, so they restart
// nothing; config_path in config.toml (rendered only when `registries` is set) points containerd here.
import type { Inventory } from '../inventory.ts';
import { WORKER } from '../layout.ts';
import { DEFAULT_REGISTRY, type RegistryMirror } from '../registry-settings.ts';
import type { TemplateSet } from './templates.ts';
import type { RenderedFile } from './types.ts';

/**
 * The first line of every hosts.toml hardway writes: a certs.d directory whose hosts.toml starts with
 * it is hardway's, and is removed when its registry leaves cluster.yaml. Others are never touched.
 */
export const HOSTS_TOML_MARKER = '# Managed by hardway';

/** A CA file hardway writes beside a hosts.toml (mirror N's CA); only such files are removed as stale. */
export const MIRROR_CA_FILE = /^mirror-[1-9][0-9]*-ca\.crt$/;

/**
 * The directory containerd looks up first for a registry: `host_port_` for `host:port` (containerd
 * tries `host_port_`, then `host:port`, then `_default`), the name itself otherwise.
 */
export function registryDirName(registry: string): string {
  const i = registry.lastIndexOf(':');
  return i > 0 ? `${registry.slice(0, i)}_${registry.slice(i + 1)}_` : registry;
}

/** The registry a directory name stands for (registryDirName reversed), e.g. localhost_5001_ -> localhost:5001. */
export function registryOfDir(dir: string): string {
  const m = /^(.+)_([0-9]+)_$/.exec(dir);
  return m ? `${m[1]}:${m[2]}` : dir;
}

/** A registry's host directory on a worker. */
export function registryDir(registry: string): string {
  return `${WORKER.containerdCertsDir}/${registryDirName(registry)}`;
}

/**
 * The upstream, tried after every mirror: what containerd itself would use (docker.io is served by
 * registry-1.docker.io; a registry on localhost speaks plain HTTP). None for `_default`, which
 * stands for many registries: each image's own registry is then the upstream.
 */
export function upstreamUrl(registry: string): string | undefined {
  if (registry === DEFAULT_REGISTRY) return undefined;
  if (registry === 'docker.io') return 'https://registry-1.docker.io';
  const host = registry.replace(/:[0-9]+$/, '');
  return host === 'localhost' || /^127\./.test(host) ? `http://${registry}` : `https://${registry}`;
}

/** Where mirror `index` (0-based) of a registry has its CA on a worker. */
export function mirrorCaPath(registry: string, index: number): string {
  return `${registryDir(registry)}/mirror-${index + 1}-ca.crt`;
}

/** Every file of every registry's host directory, for one worker; none when `registries` is unset. */
export function renderRegistries(inv: Inventory, templates: TemplateSet): RenderedFile[] {
  const file = (path: string, content: string): RenderedFile => ({ path, content, mode: 0o644, step: 'containerd', services: [] });
  return Object.entries(inv.settings.registries ?? {}).flatMap(([registry, { mirrors }]) => {
    const hostsToml = templates.render('templates/containerd-hosts.toml.hbs', {
      registry,
      fallback: registry === DEFAULT_REGISTRY,
      server: upstreamUrl(registry) ?? false,
      mirrors: mirrors.map((m: RegistryMirror, i) => ({
        url: m.url,
        capabilities: m.capabilities.map((c) => `"${c}"`).join(', '),
        skipVerify: m.skipVerify,
        ca: m.ca ? mirrorCaPath(registry, i) : false,
      })),
    });
    return [
      file(`${registryDir(registry)}/hosts.toml`, hostsToml),
      ...mirrors.flatMap((m, i) => (m.ca ? [file(mirrorCaPath(registry, i), m.ca.pem.endsWith('\n') ? m.ca.pem : `${m.ca.pem}\n`)] : [])),
    ];
  });
}
