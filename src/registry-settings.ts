// cluster.yaml `registries`: for each registry name as it appears in image names (docker.io,
// localhost:5001, or _default for every registry), its mirrors in the order containerd tries them.
// Validated here, with the line of the offending key, before any machine is touched; rendered per
// worker as containerd's certs.d/<registry>/hosts.toml (src/render/registries.ts).
import { X509Certificate } from 'node:crypto';
import { dirname, isAbsolute, resolve } from 'node:path';
import { isMap, isScalar, isSeq, type Node, type Pair } from 'yaml';
import { InputError } from './errors.ts';
import { readNamedFile } from './input-file.ts';
import { CREDENTIALS_HINT, hasCredentials, maskCredentials } from './url.ts';

/** What containerd may do with a mirror: fetch content (pull) and turn a tag into a digest (resolve). */
export const MIRROR_CAPABILITIES = ['pull', 'resolve'] as const;
/** One mirror capability. */
export type MirrorCapability = (typeof MIRROR_CAPABILITIES)[number];

/** One mirror of a registry, validated. */
export interface RegistryMirror {
  /** scheme://host[:port][/path], no trailing slash; http:// only with plainHttp. */
  url: string;
  /** The user allowed plain HTTP (the url is http://). */
  plainHttp: boolean;
  /** A CA that signs the mirror's certificate: the path as written in cluster.yaml and its PEM text. */
  ca?: { file: string; pem: string };
  /** Do not verify the mirror's certificate (https only). */
  skipVerify: boolean;
  capabilities: MirrorCapability[];
}

/** A registry's mirrors, in the order containerd tries them before the registry itself. */
export interface RegistrySettings {
  mirrors: RegistryMirror[];
}

/** The `registries` of cluster.yaml: registry name -> its mirrors, in file order. */
export type Registries = Record<string, RegistrySettings>;

/** The registry name that stands for every registry without a directory of its own (containerd's fallback). */
export const DEFAULT_REGISTRY = '_default';

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOST = `(?:${LABEL}(?:\\.${LABEL})*)`;
const PORT = '(?::(?:[1-9][0-9]{0,4}))';
/** A registry host as it appears in an image name: a lower-case DNS name or IPv4 address, and an optional port. */
const REGISTRY_NAME = new RegExp(`^${HOST}${PORT}?$`);
const MIRROR_URL = new RegExp(`^(https?)://(${HOST}${PORT}?)((?:/[A-Za-z0-9._~-]+)*)/?$`);
const SAFE_PATH = /^[A-Za-z0-9_@%+=:,./~-]+$/;

const shown = (v: unknown) => {
  // A value is quoted with any URL's password masked: the refusal must not echo what it refuses.
  const text = maskCredentials(JSON.stringify(v) ?? String(v));
  return text.length <= 80 ? text : `${text.slice(0, 80)}... (${text.length} characters)`;
};

/** True if `name` is a registry name cluster.yaml accepts under registries. */
export function isRegistryName(name: string): boolean {
  if (name === DEFAULT_REGISTRY) return true;
  const port = /:(\d+)$/.exec(name);
  return name.length <= 253 + 6 && REGISTRY_NAME.test(name) && (!port || Number(port[1]) <= 65535);
}

/** Where parseRegistries reports problems and resolves CA files. */
export interface RegistriesContext {
  /** cluster.yaml as named in messages. */
  file: string;
  /** The project directory, which CA paths are relative to; default the directory of `file`. */
  dir?: string;
  lineOf(node: Node | null | undefined): number | undefined;
}

/** Validates the value of `registries` (a YAML node); every problem is an InputError with file:line. */
export function parseRegistries(node: unknown, ctx: RegistriesContext, line?: number): Registries {
  const fail = (message: string, hint: string | undefined, at: number | undefined): never => {
    throw new InputError(message, hint, at === undefined ? { file: ctx.file } : { file: ctx.file, line: at });
  };
  const pairsOf = (n: unknown, what: string, at: number | undefined, hint: string): Pair<Node, Node>[] => {
    if (!isMap(n)) fail(`${what} must be a mapping`, hint, at);
    return (n as { items: Pair<Node, Node>[] }).items;
  };
  const keyOf = (p: Pair<Node, Node>) => (isScalar(p.key) ? String(p.key.value) : String(p.key));
  const valueOf = (p: Pair<Node, Node>) => (isScalar(p.value) ? p.value.value : p.value);
  const lineOfPair = (p: Pair<Node, Node>) => ctx.lineOf(p.value) ?? ctx.lineOf(p.key);

  const dir = ctx.dir ?? dirname(resolve(ctx.file));
  const out: Registries = {};
  const example = 'e.g.\n  registries:\n    localhost:5001:\n      mirrors:\n        - url: http://registry:5000\n          plainHttp: true';
  for (const pair of pairsOf(node, 'registries', line, `map each registry name to its mirrors, ${example}`)) {
    const name = keyOf(pair);
    const at = ctx.lineOf(pair.key);
    if (!isRegistryName(name)) {
      fail(`registries: ${shown(name)} is not a registry name`,
        'write the registry as image names start with it: a lower-case host name or IPv4 address with an optional :port ' +
          `(docker.io, localhost:5001, registry.example.com:5000), or ${DEFAULT_REGISTRY} for every registry without its own entry`, at);
    }
    const where = `registries.${name}`;
    let mirrors: RegistryMirror[] | undefined;
    for (const field of pairsOf(pair.value, where, at, `give it a list of mirrors, ${example}`)) {
      const key = keyOf(field);
      if (key !== 'mirrors') fail(`unknown key "${key}" under ${where}`, 'known keys: mirrors', ctx.lineOf(field.key));
      mirrors = parseMirrors(field.value, `${where}.mirrors`, lineOfPair(field));
    }
    if (!mirrors) fail(`${where} has no mirrors`, `list at least one, ${example}`, at);
    out[name] = { mirrors: mirrors! };
  }
  return out;

  function parseMirrors(n: unknown, where: string, at: number | undefined): RegistryMirror[] {
    if (!isSeq(n) || n.items.length === 0) {
      fail(`${where} must be a list of one or more mirrors`, '- url: https://mirror.example.com (one "- url: ..." entry per mirror, in the order to try them)', at);
    }
    const seen = new Map<string, number>();
    return (n as { items: unknown[] }).items.map((item, i) => {
      const here = `${where}[${i}]`;
      const itemLine = ctx.lineOf(item as Node) ?? at;
      const fields = new Map<string, { value: unknown; line?: number }>();
      for (const p of pairsOf(item, here, itemLine, 'each mirror is a mapping with url and optionally plainHttp, ca, skipVerify, capabilities')) {
        const key = keyOf(p);
        if (!MIRROR_KEYS.includes(key)) fail(`unknown key "${key}" under ${here}`, `known keys: ${MIRROR_KEYS.join(', ')}`, ctx.lineOf(p.key));
        fields.set(key, { value: valueOf(p), line: lineOfPair(p) });
      }
      const bool = (key: string): boolean => {
        const f = fields.get(key);
        if (f === undefined) return false;
        if (typeof f.value !== 'boolean') fail(`${here}.${key}: expected true or false, got ${shown(f.value)}`, undefined, f.line);
        return f.value as boolean;
      };
      const url = fields.get('url');
      if (!url) fail(`${here} has no url`, 'add url: https://mirror.example.com (or http://... with plainHttp: true)', itemLine);
      if (typeof url!.value === 'string' && hasCredentials(url!.value)) {
        fail(`${here}.url: ${maskCredentials(url!.value)} carries a user name or password: refused`, CREDENTIALS_HINT, url!.line);
      }
      const m = typeof url!.value === 'string' ? MIRROR_URL.exec(url!.value) : null;
      if (!m) {
        fail(`${here}.url: expected a URL like https://mirror.example.com:5000, got ${shown(url!.value)}`,
          'http:// or https://, a lower-case host name or IPv4 address, an optional :port and /path; no user, query or fragment', url!.line);
      }
      const [, scheme, hostPort, path] = m!;
      const normalized = `${scheme}://${hostPort}${path}`;
      const plainHttp = bool('plainHttp');
      const skipVerify = bool('skipVerify');
      if (scheme === 'http' && !plainHttp) {
        fail(`${here}.url: ${normalized} is plain HTTP`,
          'set plainHttp: true on this mirror to allow it (images then travel unencrypted and unchecked), or use an https:// URL', url!.line);
      }
      if (scheme === 'https' && plainHttp) {
        fail(`${here}.plainHttp: true, but the url ${normalized} is https://`,
          'containerd speaks plain HTTP to a mirror whose URL is http://: write the url as http://..., or drop plainHttp', fields.get('plainHttp')!.line);
      }
      if (seen.has(normalized)) {
        fail(`${here}.url: ${normalized} is already ${where}[${seen.get(normalized)}]`, 'list each mirror once', url!.line);
      }
      seen.set(normalized, i);
      const mirror: RegistryMirror = { url: normalized, plainHttp, skipVerify, capabilities: capabilities(fields.get('capabilities'), here) };
      if (skipVerify && plainHttp) {
        fail(`${here}.skipVerify: a plain HTTP mirror has no certificate to verify`, 'drop skipVerify, or use an https:// URL', fields.get('skipVerify')!.line);
      }
      const ca = fields.get('ca');
      if (ca) {
        if (plainHttp) fail(`${here}.ca: a plain HTTP mirror has no certificate to check with a CA`, 'drop ca, or use an https:// URL', ca.line);
        if (skipVerify) fail(`${here}.ca: skipVerify: true would ignore this CA`, 'keep one: ca (verify with this CA) or skipVerify (verify nothing)', ca.line);
        mirror.ca = readCa(ca.value, `${here}.ca`, ca.line);
      }
      return mirror;
    });
  }

  function capabilities(f: { value: unknown; line?: number } | undefined, here: string): MirrorCapability[] {
    if (f === undefined) return [...MIRROR_CAPABILITIES];
    const items = isSeq(f.value) ? f.value.items.map((x) => (isScalar(x) ? x.value : x)) : undefined;
    const ok = items !== undefined && items.length > 0 && items.every((x) => MIRROR_CAPABILITIES.includes(x as MirrorCapability)) && new Set(items).size === items.length;
    if (!ok) {
      fail(`${here}.capabilities: expected a list of ${MIRROR_CAPABILITIES.join(' and/or ')}, each once, got ${shown(items ?? f.value)}`,
        'pull: containerd fetches content from this mirror; resolve: it also trusts the mirror to turn a tag into a digest (a public mirror should only pull)', f.line);
    }
    // containerd's order, whatever order the file lists them in.
    return MIRROR_CAPABILITIES.filter((c) => items!.includes(c));
  }

  function readCa(value: unknown, key: string, at: number | undefined): { file: string; pem: string } {
    if (typeof value !== 'string' || !SAFE_PATH.test(value)) {
      fail(`${key}: expected a file path without spaces or shell characters, got ${shown(value)}`, 'a PEM CA certificate, relative to the project directory', at);
    }
    const file = value as string;
    const path = isAbsolute(file) ? file : resolve(dir, file);
    const hint = `give the CA certificate (-----BEGIN CERTIFICATE-----) that signed the mirror's certificate, never a key; the path is relative to the project directory (${dir})`;
    // A regular file of bounded size: /dev/zero or a named pipe is refused before it is opened.
    const text = readNamedFile(`${key}: ${file}`, path, hint, at === undefined ? { file: ctx.file } : { file: ctx.file, line: at }).toString('utf8');
    const certs = certificatesOnly(text);
    if ('problem' in certs) fail(`${key}: ${file} ${certs.problem}`, hint, at);
    return { file, pem: (certs as { pem: string }).pem };
  }
}

/**
 * The certificates of a CA bundle, each block checked: every PEM block must be a CERTIFICATE that
 * parses (a private key, a request, anything else is refused with its line in the file), and at
 * least one must be there. What goes to the machines is these certificates re-encoded, never the
 * file as it is: text around the blocks (comments, `openssl x509 -text`) stays on the jumpbox.
 */
export function certificatesOnly(text: string): { pem: string } | { problem: string } {
  const lines = text.split(/\r?\n/);
  const pems: string[] = [];
  let open: { label: string; line: number; body: string[] } | undefined;
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    const begin = /^-----BEGIN ([A-Z0-9 ]+)-----$/.exec(line);
    const end = /^-----END ([A-Z0-9 ]+)-----$/.exec(line);
    if (begin) {
      if (open) return { problem: `has a -----BEGIN ${begin[1]}----- (its line ${i + 1}) inside the ${open.label} block of its line ${open.line}` };
      if (begin[1] !== 'CERTIFICATE') return { problem: `holds a ${begin[1]} (its line ${i + 1}), not only certificates: refused, nothing of it goes to the machines` };
      open = { label: begin[1], line: i + 1, body: [] };
    } else if (end) {
      if (!open || end[1] !== open.label) return { problem: `has an -----END ${end[1]}----- (its line ${i + 1}) without its BEGIN line` };
      try {
        pems.push(new X509Certificate(`-----BEGIN CERTIFICATE-----\n${open.body.join('\n')}\n-----END CERTIFICATE-----\n`).toString());
      } catch {
        return { problem: `has a certificate (its line ${open.line}) that does not parse` };
      }
      open = undefined;
    } else if (open) {
      open.body.push(line);
    } else if (/-----(BEGIN|END) /.test(line)) {
      return { problem: `has a PEM line that is not one (its line ${i + 1})` };
    }
  }
  if (open) return { problem: `has a ${open.label} block (its line ${open.line}) without its END line` };
  if (pems.length === 0) return { problem: 'is not a PEM certificate' };
  return { pem: pems.map((p) => (p.endsWith('\n') ? p : `${p}\n`)).join('') };
}

/** The keys of one mirror of a registry in cluster.yaml. */
export const MIRROR_KEYS = ['url', 'plainHttp', 'ca', 'skipVerify', 'capabilities'];
