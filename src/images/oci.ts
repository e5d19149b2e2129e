// OCI image archives: a one-layer image as an OCI image layout in a tar (oci-layout, index.json,
// blobs/sha256/...), the form `ctr images import` loads; and the other way, the names and digests
// an archive's index.json declares, which is what containerd lists after importing it.
import { createHash } from 'node:crypto';
import { PreconditionError } from '../errors.ts';
import { statKey } from '../stat-key.ts';
import { readTarMembers, writeTar, type TarEntry } from './tar.ts';

/** The media types of an OCI image (uncompressed layer: nothing in it can carry a timestamp). */
export const MEDIA_TYPES = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar',
} as const;

/** The index.json annotation containerd names an imported image by (`ctr images ls` REF). */
export const CONTAINERD_NAME_ANNOTATION = 'io.containerd.image.name';
/** The OCI annotation for the reference (the tag, as docker and buildkit write it). */
export const OCI_REF_ANNOTATION = 'org.opencontainers.image.ref.name';

/** The fixed time every archive carries, so that a rebuild is byte-for-byte the same. */
export const EPOCH = '1970-01-01T00:00:00Z';

/** What a runtime needs to run the image (the `config` of an OCI image config). */
export interface RunConfig {
  Entrypoint: string[];
  Cmd?: string[];
  Env: string[];
  WorkingDir?: string;
  ExposedPorts?: Record<string, Record<string, never>>;
  Labels?: Record<string, string>;
}

/** One image: its full name, the machines' architecture, its one layer (a tar) and how it runs. */
export interface ImageSpec {
  name: string;
  arch: string;
  layer: Buffer;
  config: RunConfig;
  /** One line of history: what made the layer. */
  createdBy: string;
}

/** A content-addressed blob of the layout. */
interface Blob {
  mediaType: string;
  digest: string;
  size: number;
  data: Buffer;
}

const blob = (mediaType: string, data: Buffer): Blob => ({ mediaType, digest: `sha256:${sha256(data)}`, size: data.length, data });
const descriptor = (b: Blob) => ({ mediaType: b.mediaType, digest: b.digest, size: b.size });
const json = (value: unknown) => Buffer.from(JSON.stringify(value));

/** The tag part of a reference ('localhost/hardway/pause:1' -> '1'), for the OCI ref.name annotation. */
export function tagOf(name: string): string {
  const colon = name.lastIndexOf(':');
  if (colon < 0 || colon < name.lastIndexOf('/')) return 'latest';
  return name.slice(colon + 1);
}

/** The OCI image layout of one image as tar bytes; the same spec always gives the same bytes. */
export function ociArchive(spec: ImageSpec): Buffer {
  const layer = blob(MEDIA_TYPES.layer, spec.layer);
  const config = blob(
    MEDIA_TYPES.config,
    json({
      created: EPOCH,
      architecture: spec.arch,
      os: 'linux',
      config: spec.config,
      rootfs: { type: 'layers', diff_ids: [layer.digest] },
      history: [{ created: EPOCH, created_by: spec.createdBy }],
    }),
  );
  const manifest = blob(MEDIA_TYPES.manifest, json({ schemaVersion: 2, mediaType: MEDIA_TYPES.manifest, config: descriptor(config), layers: [descriptor(layer)] }));
  const index = {
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.index,
    manifests: [
      {
        ...descriptor(manifest),
        annotations: { [CONTAINERD_NAME_ANNOTATION]: spec.name, [OCI_REF_ANNOTATION]: tagOf(spec.name) },
        platform: { architecture: spec.arch, os: 'linux' },
      },
    ],
  };
  const blobs = [config, layer, manifest].sort((a, b) => (a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0));
  const entries: TarEntry[] = [
    { type: 'dir', path: 'blobs/', mode: 0o755 },
    { type: 'dir', path: 'blobs/sha256/', mode: 0o755 },
    ...blobs.map((b): TarEntry => ({ type: 'file', path: `blobs/sha256/${b.digest.slice('sha256:'.length)}`, mode: 0o644, data: b.data })),
    { type: 'file', path: 'index.json', mode: 0o644, data: json(index) },
    { type: 'file', path: 'oci-layout', mode: 0o644, data: json({ imageLayoutVersion: '1.0.0' }) },
  ];
  return writeTar(entries);
}

/** An image an archive declares: the name containerd stores it under and its target digest. */
export interface ArchiveImage {
  name: string;
  /** `sha256:<hex>` of the manifest (or index) the name points at: the DIGEST `ctr images ls` shows. */
  digest: string;
}

/**
 * The images an archive's index.json names. Throws a PreconditionError for an archive ctr could
 * not load under a name hardway can check: no index.json (an old `docker save`), or an entry
 * without the io.containerd.image.name annotation (ctr would store it under a made-up name).
 */
export function archiveImages(file: string, label = file): ArchiveImage[] {
  // Every worker's plan asks for the same archives: read each index.json once per process.
  const key = statKey(file);
  const known = key === undefined ? undefined : readArchives.get(key);
  if (known) return known.map((i) => ({ ...i }));
  const out = readArchiveImages(file, label);
  if (key !== undefined) readArchives.set(key, out.map((i) => ({ ...i })));
  return out;
}

/** What archiveImages read, by what the archive is (statKey). */
const readArchives = new Map<string, ArchiveImage[]>();

function readArchiveImages(file: string, label: string): ArchiveImage[] {
  let members;
  try {
    members = readTarMembers(file, ['index.json']);
  } catch (e) {
    throw new PreconditionError(`${label}: cannot read it as a tar archive: ${(e as Error).message}`);
  }
  const index = members.get('index.json');
  if (!index) {
    throw new PreconditionError(
      `${label} has no index.json: not an OCI image archive`,
      'use an OCI archive: "hardway build-images", "docker save" of Docker 25 or later, or "skopeo copy ... oci-archive:FILE:NAME" with the annotation io.containerd.image.name',
    );
  }
  let parsed: { manifests?: Array<{ digest?: unknown; annotations?: Record<string, unknown> }> };
  try {
    parsed = JSON.parse(index.data.toString('utf8'));
  } catch (e) {
    throw new PreconditionError(`${label}: index.json is not valid JSON: ${(e as Error).message}`);
  }
  const out: ArchiveImage[] = [];
  for (const m of parsed.manifests ?? []) {
    const digest = typeof m.digest === 'string' ? m.digest : '';
    if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new PreconditionError(`${label}: index.json has an entry without a sha256 digest`);
    const name = m.annotations?.[CONTAINERD_NAME_ANNOTATION];
    if (typeof name !== 'string' || name === '') {
      throw new PreconditionError(
        `${label}: index.json entry ${digest} has no ${CONTAINERD_NAME_ANNOTATION} annotation, so ctr would not store it under a name hardway can check`,
        `give every entry of index.json the annotation ${CONTAINERD_NAME_ANNOTATION} with the image's full name`,
      );
    }
    out.push({ name, digest });
  }
  if (out.length === 0) throw new PreconditionError(`${label}: index.json names no image`);
  return out;
}

/** Hex SHA-256 of bytes. */
export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
