// POSIX ustar, written and read in TypeScript so an image archive is the same bytes on every build
// (no tar binary whose version or defaults could differ): every entry owned by 0:0 with no user or
// group names, mtime 0, in the order given. The reader walks headers with positioned reads, so
// finding index.json in a large archive reads a few blocks, not the whole file.
import { closeSync, openSync, readSync } from 'node:fs';

/** One member of an archive to write. */
export type TarEntry =
  | { type: 'dir'; path: string; mode: number }
  | { type: 'file'; path: string; mode: number; data: Buffer }
  | { type: 'symlink'; path: string; target: string };

const BLOCK = 512;

/** The bytes of a ustar archive holding `entries` in the order given (callers sort them). */
export function writeTar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const data = e.type === 'file' ? e.data : Buffer.alloc(0);
    parts.push(header(e, data.length));
    if (data.length > 0) {
      parts.push(data);
      const pad = (BLOCK - (data.length % BLOCK)) % BLOCK;
      if (pad) parts.push(Buffer.alloc(pad));
    }
  }
  // The end of an archive: two zero blocks.
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}

function header(e: TarEntry, size: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  const path = e.type === 'dir' && !e.path.endsWith('/') ? `${e.path}/` : e.path;
  const [prefix, name] = splitName(path);
  h.write(name, 0, 100, 'utf8');
  octal(h, 100, 8, e.type === 'symlink' ? 0o777 : e.mode);
  octal(h, 108, 8, 0); // uid
  octal(h, 116, 8, 0); // gid
  octal(h, 124, 12, size);
  octal(h, 136, 12, 0); // mtime
  h.write('        ', 148, 8, 'latin1'); // the checksum counts its own field as spaces
  h.write(e.type === 'dir' ? '5' : e.type === 'symlink' ? '2' : '0', 156, 1, 'latin1');
  if (e.type === 'symlink') {
    if (Buffer.byteLength(e.target) > 100) throw new Error(`tar: symlink target too long: ${e.target}`);
    h.write(e.target, 157, 100, 'utf8');
  }
  h.write('ustar\u000000', 257, 8, 'latin1');
  octal(h, 329, 8, 0); // devmajor
  octal(h, 337, 8, 0); // devminor
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\u0000 ', 148, 8, 'latin1');
  return h;
}

/** ustar keeps names over 100 bytes as prefix (up to 155) + '/' + name (up to 100). */
function splitName(path: string): [string, string] {
  if (Buffer.byteLength(path) <= 100) return ['', path];
  for (let i = path.length - 1; i > 0; i--) {
    if (path[i] !== '/' || i === path.length - 1) continue;
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return [prefix, name];
  }
  throw new Error(`tar: name too long for ustar: ${path}`);
}

function octal(h: Buffer, offset: number, length: number, value: number): void {
  h.write(value.toString(8).padStart(length - 1, '0') + '\u0000', offset, length, 'latin1');
}

/** A member found by readTarMembers: its name as stored (without a leading "./") and its bytes. */
export interface TarMember {
  path: string;
  data: Buffer;
}

/**
 * Reads the regular files named in `wanted` (at most `limit` bytes each) out of a tar archive on
 * disk; names match with or without a leading "./". Understands ustar, pax extended headers (a
 * long path) and GNU long names, which is what docker, skopeo and GNU tar write.
 */
export function readTarMembers(file: string, wanted: readonly string[], limit = 4 * 1024 * 1024): Map<string, TarMember> {
  const want = new Set(wanted.map(clean));
  const found = new Map<string, TarMember>();
  const fd = openSync(file, 'r');
  try {
    let pos = 0;
    let longName: string | undefined;
    const block = Buffer.alloc(BLOCK);
    const read = (at: number, n: number): Buffer => {
      const buf = Buffer.alloc(n);
      const got = readSync(fd, buf, 0, n, at);
      if (got !== n) throw new Error(`${file}: truncated tar archive`);
      return buf;
    };
    while (found.size < want.size) {
      if (readSync(fd, block, 0, BLOCK, pos) < BLOCK || block.every((b) => b === 0)) break;
      if (!checksumOk(block)) throw new Error(`${file}: not a tar archive (bad header checksum at byte ${pos})`);
      const size = parseNumber(block.subarray(124, 136));
      const type = String.fromCharCode(block[156]!);
      const dataAt = pos + BLOCK;
      pos = dataAt + Math.ceil(size / BLOCK) * BLOCK;
      if (type === 'x' || type === 'L') {
        // The next member's real name: a pax record "N path=...\n" or a GNU long name.
        const data = read(dataAt, size);
        longName = type === 'L' ? data.toString('utf8').replace(/\0.*$/s, '') : paxPath(data) ?? longName;
        continue;
      }
      if (type === 'g') continue;
      const prefix = cString(block.subarray(345, 500));
      const name = longName ?? (prefix ? `${prefix}/${cString(block.subarray(0, 100))}` : cString(block.subarray(0, 100)));
      longName = undefined;
      const path = clean(name);
      if ((type === '0' || type === '\0') && want.has(path) && !found.has(path)) {
        if (size > limit) throw new Error(`${file}: ${path} is larger than ${limit} bytes`);
        found.set(path, { path, data: read(dataAt, size) });
      }
    }
  } finally {
    closeSync(fd);
  }
  return found;
}

const clean = (p: string) => p.replace(/^(\.\/)+/, '');

function cString(b: Buffer): string {
  const end = b.indexOf(0);
  return b.subarray(0, end < 0 ? b.length : end).toString('utf8');
}

/** A numeric header field: octal text, or base-256 when the top bit of the first byte is set. */
function parseNumber(b: Buffer): number {
  if (b[0]! & 0x80) {
    let v = b[0]! & 0x7f;
    for (const x of b.subarray(1)) v = v * 256 + x;
    return v;
  }
  const text = b.toString('latin1').replace(/\0.*$/s, '').trim();
  return text ? parseInt(text, 8) : 0;
}

function checksumOk(h: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
  return parseNumber(h.subarray(148, 156)) === sum;
}

function paxPath(data: Buffer): string | undefined {
  let path: string | undefined;
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space < 0) break;
    const len = Number(data.subarray(at, space).toString('latin1'));
    if (!Number.isInteger(len) || len <= 0) break;
    const record = data.subarray(space + 1, at + len - 1).toString('utf8');
    if (record.startsWith('path=')) path = record.slice(5);
    at += len;
  }
  return path;
}
