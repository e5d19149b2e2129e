// Desired files -> `put` changes only where content, mode or owner differ (compared by SHA-256,
// never by time). A file whose content is right but whose mode or owner is wrong gets a chmod or
// chown instead of a new upload.
import { createHash } from 'node:crypto';
import { sh } from '../shell.ts';
import { DEFAULT_OWNER } from '../transport/types.ts';
import type { Change, PutContent } from './types.ts';
import { formatMode, type Facts, type FileFact } from './facts.ts';

/** A file as it should be on the machine. */
export interface DesiredFile {
  path: string;
  content: PutContent;
  mode: number;
  /** `user:group`; default root:root. */
  owner?: string;
  secret?: boolean;
}

/** The owner a file gets when a step names none (the transport's default). */
export { DEFAULT_OWNER };

/** SHA-256 (hex) of a put's content. */
export function contentSha256(content: PutContent): string {
  return Buffer.isBuffer(content) ? createHash('sha256').update(content).digest('hex') : content.sha256;
}

/** Stats every desired file in one remote command and returns the changes that make them right. */
export async function fileChanges(facts: Facts, desired: DesiredFile[]): Promise<Change[]> {
  if (desired.length === 0) return [];
  const current = await facts.stat(desired.map((d) => d.path));
  return desired.flatMap((d) => changesForFile(d, current.get(d.path)!));
}

/** The changes for one file given its current facts (a stat answer). Pure; used by fileChanges. */
export function changesForFile(d: DesiredFile, now: FileFact): Change[] {
  const owner = d.owner ?? DEFAULT_OWNER;
  const put = (reason: string): Change => ({ kind: 'put', path: d.path, content: d.content, mode: d.mode, owner, secret: d.secret, reason });
  if (!now.exists) return [put('missing')];
  if (now.notFile) return [put('not a regular file')];
  if (now.sha256 !== contentSha256(d.content)) return [put('content differs')];
  const changes: Change[] = [];
  if ((now.mode! & 0o7777) !== d.mode) {
    changes.push({ kind: 'exec', cmd: sh`chmod ${formatMode(d.mode)} ${d.path}`, reason: `mode is ${formatMode(now.mode!)}, want ${formatMode(d.mode)}` });
  }
  if (now.owner !== owner) {
    changes.push({ kind: 'exec', cmd: sh`chown ${owner} ${d.path}`, reason: `owner is ${now.owner}, want ${owner}` });
  }
  return changes;
}
