// cluster.yaml: optional cluster-wide settings beside machines.txt, every key defaulting to the
// KTHW values. Unknown keys and bad values are input errors naming the file and line.
import { LineCounter, parseDocument, isMap, isScalar, isSeq, visit, type Node, type Pair } from 'yaml';
import { InputError, quote } from './errors.ts';
import { imageRefProblem } from './image-ref.ts';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { checkIdentityFile } from './identity-file.ts';
import { namedFile, readInputFile, statPath } from './input-file.ts';
import { CREDENTIALS_HINT, hasCredentials, maskCredentials } from './url.ts';
import { contains, nthAddress, parseCidr, parseIPv4, size, type Network } from './net/ipv4.ts';
import { MIRROR_KEYS, parseRegistries, type Registries } from './registry-settings.ts';
import { ALL_PREFLIGHT, PREFLIGHT_NAMES, type PreflightName } from './preflight-names.ts';
import { closest, didYouMean } from './suggest.ts';

/** Key algorithms hardway can issue certificates with. */
export const KEY_ALGORITHMS = ['rsa-4096', 'rsa-2048', 'ecdsa-p256'] as const;
/** One of the supported key algorithms. */
export type KeyAlgorithm = (typeof KEY_ALGORITHMS)[number];

/** Components whose version the cluster pins. */
export const COMPONENTS = ['kubernetes', 'etcd', 'containerd', 'runc', 'cni-plugins', 'crictl'] as const;
/** A component name. */
export type Component = (typeof COMPONENTS)[number];

/** How hardway reaches the machines over SSH. Paths are resolved against the project directory. */
export interface SshSettings {
  user: string;
  /** How commands are raised to root when user is not root: sudo -n (the default then) or none. */
  become?: Become;
  /** Seconds for the TCP connect and SSH handshake of one attempt (default 10). */
  connectTimeout?: number;
  port: number;
  identityFile?: string;
  knownHosts: string;
  jumpHost?: string;
  configFile?: string;
}

/** How a login that is not root runs commands as root: `sudo -n` (never asking a password), or not at all. */
export const BECOME = ['sudo', 'none'] as const;
/** One of BECOME. */
export type Become = (typeof BECOME)[number];

/** The seconds ssh.connectTimeout defaults to. */
export const DEFAULT_CONNECT_TIMEOUT_S = 10;

/** How commands are raised on the machines: sudo for a user other than root unless ssh.become says none; root needs nothing. */
export function becomeOf(ssh: Pick<SshSettings, 'user' | 'become'>): Become {
  if (ssh.user === 'root') return 'none';
  return ssh.become ?? 'sudo';
}

/** containerd settings that some hosts need (see README: cluster.yaml). */
export interface ContainerdSettings {
  /** restrict_oom_score_adj in the CRI plugin: for hosts where no process may lower its oom_score_adj. */
  restrictOomScoreAdj: boolean;
}

/** kube-proxy settings that some hosts need. */
export interface KubeProxySettings {
  /** conntrack.maxPerCore of KubeProxyConfiguration (0: leave the kernel's limit alone); unset: kube-proxy's default. */
  conntrackMaxPerCore?: number;
}

/** The cluster DNS add-on (CoreDNS): on by default; see docs for every key. */
export interface DnsSettings {
  enabled: boolean;
  /** The kube-dns Service address every kubelet hands to pods; unset: the 10th address of serviceCidr. */
  clusterIP?: string;
  /** The CoreDNS image; unset: the one that fits the cluster's Kubernetes release (src/dns/image.ts). */
  image?: string;
  /** Where `build-images` takes the CoreDNS source archive from (a path beside cluster.yaml, or a URL); unset: hardway's cache. */
  source?: string;
}

/** Scheduled etcd snapshots on one control-plane machine (etcd.snapshots): off unless set. */
export interface EtcdSnapshotSettings {
  /** The interval as written (30m, 12h, 1d). */
  every: string;
  /** The interval in seconds (at least MIN_SNAPSHOT_INTERVAL_S). */
  everySeconds: number;
  /** How many snapshots to keep there: the newest, the others deleted after each save. */
  keep: number;
}

/** etcd settings: scheduled snapshots. */
export interface EtcdSettings {
  snapshots?: EtcdSnapshotSettings;
}

/** Preflight checks (preflight.ignore): the names `up` skips, as --ignore-preflight does. */
export interface PreflightSettings {
  ignore: Array<PreflightName | typeof ALL_PREFLIGHT>;
}

/** The shortest interval of scheduled snapshots: a minute (each one reads the whole database). */
export const MIN_SNAPSHOT_INTERVAL_S = 60;
/** Scheduled snapshots kept when etcd.snapshots.keep is not given (RKE2 keeps five too). */
export const DEFAULT_SNAPSHOT_KEEP = 5;

/** Every cluster-wide setting, defaults filled in. */
export interface ClusterSettings {
  clusterCidr: string;
  serviceCidr: string;
  clusterDomain: string;
  apiPort: number;
  nodePortRange: string;
  keyAlgorithm: KeyAlgorithm;
  certValidityDays: number;
  renewBeforeDays: number;
  /** An even number of control-plane machines on purpose (else refused: usually a worker line without its pod subnet). */
  evenControlPlanes?: boolean;
  versions: Record<Component, string>;
  ssh: SshSettings;
  /** The pod sandbox (pause) image containerd runs; unset: containerd's own default. */
  sandboxImage?: string;
  containerd: ContainerdSettings;
  kubeProxy: KubeProxySettings;
  /** Registry mirrors per registry name (containerd's certs.d/<registry>/hosts.toml); unset: none, and no config_path. */
  registries?: Registries;
  dns: DnsSettings;
  etcd: EtcdSettings;
  preflight: PreflightSettings;
  /** Published digests of release files hardway does not carry (URL: sha256:HEX or sha512:HEX): another version of a component; unset: none. */
  checksums?: Record<string, string>;
}

/** The KTHW defaults (stable releases where the tutorial used pre-releases). */
export function defaultSettings(): ClusterSettings {
  return {
    clusterCidr: '10.200.0.0/16',
    serviceCidr: '10.32.0.0/24',
    clusterDomain: 'cluster.local',
    apiPort: 6443,
    nodePortRange: '30000-32767',
    keyAlgorithm: 'rsa-4096',
    certValidityDays: 3653,
    renewBeforeDays: 30,
    versions: {
      kubernetes: 'v1.32.3',
      etcd: 'v3.5.21',
      containerd: 'v2.0.5',
      runc: 'v1.2.6',
      'cni-plugins': 'v1.6.2',
      crictl: 'v1.32.0',
    },
    ssh: { user: 'root', port: 22, knownHosts: 'known_hosts' },
    containerd: { restrictOomScoreAdj: false },
    kubeProxy: {},
    dns: { enabled: true },
    etcd: {},
    preflight: { ignore: [] },
  };
}

type Check = (value: unknown, say: (msg: string, hint?: string) => never) => unknown;

const DNS_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const SAFE_PATH = /^[A-Za-z0-9_@%+=:,./~-]+$/;
const SAFE_WORD = /^[A-Za-z0-9_.-]+$/;

const str =
  (pattern: RegExp, what: string): Check =>
  (v, say) => {
    if (typeof v !== 'string' || !pattern.test(v)) say(`expected ${what}, got ${quote(v)}`);
    return v;
  };
const int =
  (min: number, max: number): Check =>
  (v, say) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      say(`expected a whole number from ${min} to ${max}, got ${quote(v)}`);
    return v;
  };
const cidr: Check = (v, say) => {
  if (typeof v !== 'string') say(`expected a network like 10.200.0.0/16, got ${quote(v)}`);
  const r = parseCidr(v as string);
  if (!r.ok) say(r.reason, r.meant ? `did you mean ${r.meant}?` : 'write it as a.b.c.d/n');
  return v;
};
/** The smallest service range accepted: a /28 holds 14 Service IPs (the tutorial's /24 holds 254). */
export const SMALLEST_SERVICE_PREFIX = 28;
const serviceCidr: Check = (v, say) => {
  cidr(v, say);
  const net = (parseCidr(v as string) as { ok: true; net: Network }).net;
  if (net.prefix > SMALLEST_SERVICE_PREFIX) {
    say(`${v as string} is too small for Services: it holds ${2 ** (32 - net.prefix)} address${net.prefix === 32 ? '' : 'es'}`,
      `use a /${SMALLEST_SERVICE_PREFIX} or larger (the tutorial uses 10.32.0.0/24): its first usable address is the kubernetes ` +
        'Service IP (10.32.0.1 in 10.32.0.0/24), which the API server certificate names, and every other Service takes one more');
  }
  return v;
};
const portRange: Check = (v, say) => {
  const m = typeof v === 'string' ? /^(\d{1,5})-(\d{1,5})$/.exec(v) : null;
  if (!m || Number(m[1]) < 1 || Number(m[1]) >= Number(m[2]) || Number(m[2]) > 65535)
    say(`expected a port range like 30000-32767, got ${quote(v)}`, 'FIRST-LAST, ports from 1 to 65535, FIRST below LAST');
  return v;
};
const bool: Check = (v, say) => {
  if (typeof v !== 'boolean') say(`expected true or false, got ${JSON.stringify(v)}`);
  return v;
};
// An image reference as containerd parses it (src/image-ref.ts); echoed cut after 60 characters.
const imageRef: Check = (v, say) => {
  const problem = typeof v === 'string' ? imageRefProblem(v) : 'not a string';
  if (problem !== undefined)
    say(`expected an image reference like registry.k8s.io/pause:3.6, got ${quote(v)}: ${problem}`,
      'lower-case repository path, optional registry[:port]/ in front (a port from 1 to 65535), :tag and/or @sha256:digest after');
  return v;
};
const ipv4: Check = (v, say) => {
  if (typeof v !== 'string' || parseIPv4(v) === undefined) say(`expected an IPv4 address like 10.32.0.10, got ${quote(v)}`);
  return v;
};
// A path (relative to the project directory) or an http(s) URL, without characters a shell or a URL would read otherwise.
const pathOrUrl: Check = (v, say) => {
  if (typeof v === 'string' && hasCredentials(v)) say(`${maskCredentials(v)} carries a user name or password: refused`, CREDENTIALS_HINT);
  if (typeof v !== 'string' || !(/^https?:\/\/[A-Za-z0-9._~:/?#@!$&'()*+,;=%-]+$/.test(v) || SAFE_PATH.test(v)))
    say(`expected a file path or an http(s) URL, got ${quote(v)}`, 'e.g. ../downloads/coredns-1.8.3.tar.gz (relative to the project directory)');
  return v;
};
const oneOf =
  (choices: readonly string[]): Check =>
  (v, say) => {
    if (typeof v !== 'string' || !choices.includes(v))
      say(`expected one of ${choices.join(', ')}, got ${quote(v)}`);
    return v;
  };

/** Seconds per unit of a duration: 90s, 30m, 12h, 1d, or several (1h30m). */
const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** The seconds of a duration like 30m, 12h, 1d or 1h30m; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  if (!/^(\d+[smhd])+$/.test(text)) return undefined;
  return [...text.matchAll(/(\d+)([smhd])/g)].reduce((sum, m) => sum + Number(m[1]) * DURATION_UNITS[m[2]!]!, 0);
}

const duration: Check = (v, say) => {
  const seconds = typeof v === 'string' ? parseDuration(v) : undefined;
  if (seconds === undefined) say(`expected a duration like 30m, 12h or 1d, got ${quote(v)}`, 'a number and a unit (s, m, h, d), or several: 1h30m');
  if (seconds! < MIN_SNAPSHOT_INTERVAL_S) say(`${quote(v)} is shorter than a minute`, 'each snapshot reads the whole database: take one every minute at most, e.g. 1m, 30m or 12h');
  return v;
};

/** One name of preflight.ignore: a check's, or all. */
const preflightName: Check = (v, say) => {
  const known: string[] = [...PREFLIGHT_NAMES, ALL_PREFLIGHT];
  if (typeof v !== 'string' || !known.includes(v)) {
    const near = typeof v === 'string' ? didYouMean(closest(v, known)) : undefined;
    say(`no preflight check is named ${quote(v)}`, `${near ? `${near} ` : ''}the checks: ${PREFLIGHT_NAMES.join(', ')} (or ${ALL_PREFLIGHT})`);
  }
  return v;
};

const TOP: Record<string, Check | 'versions' | 'ssh' | 'section' | 'registries' | 'etcd' | 'preflight' | 'checksums'> = {
  clusterCidr: cidr,
  serviceCidr: serviceCidr,
  clusterDomain: str(DNS_NAME, 'a DNS domain like cluster.local'),
  apiPort: int(1, 65535),
  nodePortRange: portRange,
  keyAlgorithm: oneOf(KEY_ALGORITHMS),
  certValidityDays: int(1, 36500),
  renewBeforeDays: int(0, 3650),
  evenControlPlanes: bool,
  versions: 'versions',
  ssh: 'ssh',
  sandboxImage: imageRef,
  containerd: 'section',
  kubeProxy: 'section',
  registries: 'registries',
  dns: 'section',
  etcd: 'etcd',
  preflight: 'preflight',
  checksums: 'checksums',
};
/** The keys of each plain mapping section (TOP entries marked 'section'). */
const SECTIONS: Record<'containerd' | 'kubeProxy' | 'dns', Record<string, Check>> = {
  containerd: { restrictOomScoreAdj: bool },
  kubeProxy: { conntrackMaxPerCore: int(0, 2147483647) },
  dns: { enabled: bool, clusterIP: ipv4, image: imageRef, source: pathOrUrl },
};
/** The keys of etcd.snapshots. */
const SNAPSHOT_KEYS: Record<'every' | 'keep', Check> = { every: duration, keep: int(1, 1000) };
/** Every key cluster.yaml knows, dotted (ssh.user, registries.REGISTRY.mirrors[].url): the reference in docs/cluster-yaml.md names each. */
export function clusterYamlKeys(): string[] {
  return Object.keys(TOP).flatMap((k) => {
    const kind = TOP[k];
    if (kind === 'versions') return COMPONENTS.map((c) => `versions.${c}`);
    if (kind === 'ssh') return Object.keys(SSH).map((s) => `ssh.${s}`);
    if (kind === 'section') return Object.keys(SECTIONS[k as keyof typeof SECTIONS]).map((s) => `${k}.${s}`);
    if (kind === 'registries') return MIRROR_KEYS.map((m) => `registries.REGISTRY.mirrors[].${m}`);
    if (kind === 'etcd') return Object.keys(SNAPSHOT_KEYS).map((s) => `etcd.snapshots.${s}`);
    if (kind === 'preflight') return ['preflight.ignore'];
    if (kind === 'checksums') return ['checksums.URL'];
    return [k];
  });
}

/** A published digest as release pages give it, with its algorithm: sha256:HEX or sha512:HEX. */
const DIGEST = str(/^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$/, 'sha256:<64 hex digits> or sha512:<128 hex digits>, as published');
const VERSION = str(/^v?\d+\.\d+\.\d+([-+][A-Za-z0-9.-]+)?$/, 'a version like v1.32.3');
const SSH: Record<keyof SshSettings, Check> = {
  // A name that reaches sshd and sudoers as is: no shell characters, no leading dash (an option to ssh or sudo).
  user: (v, say) => {
    if (typeof v !== 'string' || !/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(v) || v.length > 32) {
      say(`expected a user name, got ${quote(v)}`, 'a login name of letters, digits, _ . and - that does not start with - (e.g. root, debian, ubuntu)');
    }
    return v;
  },
  become: oneOf(BECOME),
  connectTimeout: int(1, 600),
  port: int(1, 65535),
  identityFile: str(SAFE_PATH, 'a file path without spaces or shell characters'),
  knownHosts: str(SAFE_PATH, 'a file path without spaces or shell characters'),
  jumpHost: (v, say) => {
    // [user@]host[:port], as ssh -J takes it (one hop); host may be an alias from the ssh config.
    const m = typeof v === 'string' ? /^(?:([A-Za-z0-9_][A-Za-z0-9_.-]*)@)?([A-Za-z0-9_][A-Za-z0-9_.-]*)(?::(\d{1,10}))?$/.exec(v) : null;
    if (!m) say(`expected a jump host like user@host:22, got ${quote(v)}`, 'write [user@]host[:port]: one host name or address, no spaces');
    const port = m![3] === undefined ? undefined : Number(m![3]);
    if (port !== undefined && (port < 1 || port > 65535)) say(`port ${m![3]} of ${quote(v)} is not a port number`, 'use a port from 1 to 65535, e.g. admin@bastion:22');
    return v;
  },
  configFile: str(SAFE_PATH, 'a file path without spaces or shell characters'),
};

/** Reads cluster.yaml if it exists (else defaults) and validates every key, and the files it names. */
export function loadClusterSettings(file: string, shownAs = file): ClusterSettings {
  const text = readInputFile(file, shownAs, 'cluster.yaml beside machines.txt is optional: make it a YAML file of settings, or remove it');
  if (text === undefined) return defaultSettings();
  return parseClusterSettings(text, shownAs, { dir: dirname(file) });
}

/**
 * Parses and validates cluster.yaml text; `file` is used in error messages. With `dir` (the project
 * directory), the files the ssh settings name are checked too, relative to it.
 */
export function parseClusterSettings(text: string, file: string, opts: { dir?: string } = {}): ClusterSettings {
  const settings = defaultSettings();
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const lineOf = (node: Node | null | undefined) =>
    node?.range ? lines.linePos(node.range[0]).line : undefined;
  if (doc.errors.length > 0) {
    const err = doc.errors[0]!;
    throw new InputError(
      `not valid YAML: ${err.message.split('\n')[0]}`,
      'fix the YAML syntax (indentation with spaces, key: value)',
      { file, line: lines.linePos(err.pos[0]).line },
    );
  }
  if (doc.contents === null) return settings;
  // An alias (*name) stands for another node: refused by its line, never shown as the parser's object.
  visit(doc, {
    Alias(_key, node) {
      throw new InputError(`an alias (*${node.source}) where hardway reads a value`, 'cluster.yaml takes plain values: write the value itself instead of the alias', { file, line: lineOf(node) ?? 1 });
    },
  });
  const mapOrFail = (node: unknown, what: string, line?: number) => {
    if (!isMap(node))
      throw new InputError(`${what} must be a mapping of key: value`, undefined, { file, line });
    return node.items as Pair<Node, Node>[];
  };
  const each = (
    pairs: Pair<Node, Node>[],
    known: string[],
    where: string,
    fn: (key: string, value: unknown, pair: Pair<Node, Node>, line?: number) => void,
  ) => {
    for (const pair of pairs) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const line = lineOf(pair.key);
      if (!known.includes(key))
        throw new InputError(`unknown key ${quote(key)}${where}`, `known keys: ${known.join(', ')}`, { file, line });
      const value = isScalar(pair.value) ? pair.value.value : pair.value;
      fn(key, value, pair, lineOf(pair.value) ?? line);
    }
  };
  const validate = (check: Check, key: string, value: unknown, line?: number) =>
    check(value, (msg, hint) => {
      throw new InputError(`${key}: ${msg}`, hint, { file, line });
    });
  const keyLines = new Map<string, number>();

  each(mapOrFail(doc.contents, 'cluster.yaml', 1), Object.keys(TOP), '', (key, value, pair, line) => {
    if (line !== undefined) keyLines.set(key, line);
    const check = TOP[key]!;
    if (check === 'versions') {
      each(mapOrFail(pair.value, 'versions', line), [...COMPONENTS], ' under versions', (c, v, _p, l) => {
        settings.versions[c as Component] = validate(VERSION, `versions.${c}`, v, l) as string;
      });
    } else if (check === 'ssh') {
      each(mapOrFail(pair.value, 'ssh', line), Object.keys(SSH), ' under ssh', (k, v, _p, l) => {
        if (l !== undefined) keyLines.set(`ssh.${k}`, l);
        (settings.ssh as unknown as Record<string, unknown>)[k] = validate(
          SSH[k as keyof SshSettings],
          `ssh.${k}`,
          v,
          l,
        );
      });
    } else if (check === 'etcd') {
      each(mapOrFail(pair.value, 'etcd', line), ['snapshots'], ' under etcd', (_k, _v, snap, l) => {
        const given: Record<string, unknown> = {};
        each(mapOrFail(snap.value, 'etcd.snapshots', l), Object.keys(SNAPSHOT_KEYS), ' under etcd.snapshots', (k, v, _p, kl) => {
          given[k] = validate(SNAPSHOT_KEYS[k as keyof typeof SNAPSHOT_KEYS], `etcd.snapshots.${k}`, v, kl);
        });
        if (given.every === undefined) throw new InputError('etcd.snapshots needs every: how often to take a snapshot', 'e.g. every: 12h (and keep: 5, the default), or remove etcd.snapshots to take none', { file, ...(l !== undefined ? { line: l } : {}) });
        const every = given.every as string;
        settings.etcd.snapshots = { every, everySeconds: parseDuration(every)!, keep: (given.keep as number | undefined) ?? DEFAULT_SNAPSHOT_KEEP };
      });
    } else if (check === 'preflight') {
      each(mapOrFail(pair.value, 'preflight', line), ['ignore'], ' under preflight', (_k, v, p, l) => {
        if (!isSeq(p.value)) throw new InputError(`preflight.ignore: expected a list of check names, got ${quote(v)}`, `e.g. [clock]; the checks: ${PREFLIGHT_NAMES.join(', ')} (or ${ALL_PREFLIGHT})`, { file, ...(l !== undefined ? { line: l } : {}) });
        settings.preflight.ignore = p.value.items.map((item) => validate(preflightName, 'preflight.ignore', isScalar(item) ? item.value : item, lineOf(item as Node) ?? l) as PreflightName);
      });
    } else if (check === 'checksums') {
      // Any key is a URL here: checked as one, not against a list of names.
      settings.checksums = {};
      for (const item of mapOrFail(pair.value, 'checksums', line)) {
        const url = (item.key as { value?: unknown } | null)?.value;
        const l = lineOf(item.key) ?? line;
        if (typeof url !== 'string' || !/^https:\/\/[^\s@]+$/.test(url)) throw new InputError(`checksums: ${quote(url)} is not an https URL of a release file`, 'write the URL hardway downloads, e.g. https://github.com/etcd-io/etcd/releases/download/v3.5.22/etcd-v3.5.22-linux-amd64.tar.gz', { file, line: l });
        settings.checksums[url] = validate(DIGEST, `checksums.${url}`, (item.value as { value?: unknown } | null)?.value, lineOf(item.value) ?? l) as string;
      }
    } else if (check === 'registries') {
      settings.registries = parseRegistries(pair.value, { file, lineOf }, line);
    } else if (check === 'section') {
      const fields = SECTIONS[key as keyof typeof SECTIONS];
      const target = settings[key as keyof typeof SECTIONS] as Record<string, unknown>;
      each(mapOrFail(pair.value, key, line), Object.keys(fields), ` under ${key}`, (k, v, _p, l) => {
        if (l !== undefined) keyLines.set(`${key}.${k}`, l);
        target[k] = validate(fields[k]!, `${key}.${k}`, v, l);
      });
    } else {
      (settings as unknown as Record<string, unknown>)[key] = validate(check, key, value, line);
    }
  });
  checkTogether(settings, (key) => keyLines.get(key), file);
  if (opts.dir !== undefined) checkSshFiles(settings.ssh, opts.dir, (key) => keyLines.get(key), file);
  return settings;
}

/**
 * The files the ssh settings name, checked when cluster.yaml is read rather than on each machine
 * later: identityFile and configFile must be files; knownHosts may not exist yet (the first
 * --accept-new-host-keys writes it) but its directory must. Paths are relative to the project
 * directory; ~/ is the home directory, as for the transport.
 */
function checkSshFiles(ssh: SshSettings, dir: string, lineOf: (key: string) => number | undefined, file: string): void {
  const at = (p: string) => {
    const expanded = p === '~' || p.startsWith('~/') ? join(homedir(), p.slice(1)) : p;
    return isAbsolute(expanded) ? expanded : resolve(dir, expanded);
  };
  const where = (key: string) => ({ file, ...(lineOf(key) !== undefined ? { line: lineOf(key)! } : {}) });
  // The same check as -i's: missing, a directory, or a public key given as the private one.
  if (ssh.identityFile !== undefined) {
    checkIdentityFile(at(ssh.identityFile), 'ssh.identityFile', where('ssh.identityFile'), `; a relative path is taken from the project directory (${dir})`);
  }
  const mustBeFile = (key: 'configFile', what: string) => {
    const value = ssh[key];
    if (value === undefined) return;
    const path = at(value);
    const hint = `ssh.${key} is ${what}; a relative path is taken from the project directory (${dir})`;
    if (namedFile(`ssh.${key}: ${path}`, path, hint, where(`ssh.${key}`)) === undefined) throw new InputError(`ssh.${key}: ${path} does not exist`, hint, where(`ssh.${key}`));
  };
  mustBeFile('configFile', 'an ssh config file to read hosts from');
  const knownHosts = at(ssh.knownHosts);
  const hint = 'ssh.knownHosts is where the machines\' host keys are pinned; hardway creates the file, not its directory';
  // A known_hosts file grows with the machines: some hundred bytes each.
  const found = namedFile(`ssh.knownHosts: ${knownHosts}`, knownHosts, hint, where('ssh.knownHosts'), KNOWN_HOSTS_MAX_BYTES);
  if (found === undefined) {
    const parent = statPath(dirname(knownHosts), dirname(knownHosts), hint);
    if (parent === undefined || !parent.isDirectory()) throw new InputError(`ssh.knownHosts: the directory ${dirname(knownHosts)} does not exist`, hint, where('ssh.knownHosts'));
  }
}

/** The largest ssh.knownHosts file read: room for tens of thousands of machines' keys. */
const KNOWN_HOSTS_MAX_BYTES = 16 * 1024 * 1024;

/** The default cluster DNS address: the 10th address of the service CIDR (10.32.0.10 in 10.32.0.0/24), as kubeadm picks it. */
export function defaultClusterDnsIp(serviceCidr: string): string {
  return nthAddress((parseCidr(serviceCidr) as { ok: true; net: Network }).net, 10);
}

/** Why `ip` cannot be the cluster DNS address in `serviceCidr` (outside it, its network or broadcast address, the API Service's), or undefined. */
export function clusterDnsProblem(ip: string, serviceCidr: string): string | undefined {
  const net = (parseCidr(serviceCidr) as { ok: true; net: Network }).net;
  const n = parseIPv4(ip)!;
  if (!contains(net, n)) return `lies outside the service CIDR ${serviceCidr}: the API server gives Service addresses only from that range`;
  if (n === net.base) return `is the network address of ${serviceCidr}`;
  if (n === net.base + size(net) - 1) return `is the broadcast address of ${serviceCidr}`;
  if (n === net.base + 1) return `is the kubernetes API Service address (the first of ${serviceCidr}), which the API server takes for itself`;
  return undefined;
}

/** Ports the cluster's own components, and SSH, listen on, and who listens. */
function portsTaken(s: ClusterSettings): Map<number, string> {
  return new Map<number, string>([
    [s.ssh.port, 'SSH (ssh.port), which hardway reaches the machines by'],
    [2379, 'etcd (client port)'],
    [2380, 'etcd (peer port)'],
    [10248, "the kubelet's health check"],
    [10249, "kube-proxy's metrics"],
    [10250, "the kubelet's API"],
    [10256, "kube-proxy's health check"],
    [10257, 'kube-controller-manager'],
    [10259, 'kube-scheduler'],
  ]);
}

/**
 * Checks that involve several keys. The error names the line of the key set last in the file
 * (a default is never the culprit: only what the file says is).
 */
function checkTogether(s: ClusterSettings, lineOf: (key: string) => number | undefined, file: string): void {
  const fail = (keys: string[], message: string, hint: string): never => {
    const line = Math.max(0, ...keys.map((k) => lineOf(k) ?? 0));
    throw new InputError(message, hint, line > 0 ? { file, line } : { file });
  };
  const taken = portsTaken(s);
  const apiUser = taken.get(s.apiPort);
  if (apiUser !== undefined) {
    fail(['apiPort', 'ssh.port'], `apiPort ${s.apiPort} is already used on the machines by ${apiUser}`,
      `pick a port nothing else listens on, e.g. 6443 (the tutorial's); ports in use: ${[...taken].map(([p, who]) => `${p} ${who}`).join(', ')}`);
  }
  const [first, last] = s.nodePortRange.split('-').map(Number) as [number, number];
  const covered = [[s.apiPort, 'the API server (apiPort)'] as const, ...taken].filter(([p]) => p >= first && p <= last);
  if (covered.length > 0) {
    fail(['nodePortRange', 'apiPort', 'ssh.port'], `nodePortRange ${s.nodePortRange} covers port ${covered[0]![0]}, used by ${covered[0]![1]}`,
      'a NodePort Service opens its port on every worker, taking it from whatever listens there: ' +
        `choose a range clear of ${covered.map(([p]) => p).join(', ')}, e.g. 30000-32767 (the default)`);
  }
  if (s.dns.clusterIP !== undefined) {
    const problem = clusterDnsProblem(s.dns.clusterIP, s.serviceCidr);
    if (problem) fail(['dns.clusterIP', 'serviceCidr'], `dns.clusterIP ${s.dns.clusterIP} ${problem}`,
      `pick a free address inside ${s.serviceCidr} other than its first, e.g. ${defaultClusterDnsIp(s.serviceCidr)} (the default: leave dns.clusterIP out)`);
  }
  if (s.certValidityDays <= s.renewBeforeDays) {
    fail(['certValidityDays', 'renewBeforeDays'],
      `certValidityDays (${s.certValidityDays}) must be greater than renewBeforeDays (${s.renewBeforeDays})`,
      'otherwise every certificate is due for renewal the moment it is issued, and every run reissues all of them, ' +
        'redistributes them and restarts every component: e.g. certValidityDays: 365 with renewBeforeDays: 30');
  }
}
