// What a plan would do on one host, as lines for the user: one line per change and, in dry-run,
// a unified diff for each text file against its current content on the machine.
import type { Change, PutChange } from './types.ts';
import type { Facts, FileFact } from './facts.ts';
import { describeChange, describeChangeAs } from './apply.ts';
import type { Command } from '../shell.ts';
import { unifiedDiff } from './diff.ts';

/** One line per change, no contents (normal runs). */
export function changeLines(changes: Change[]): string[] {
  return changes.map(describeChange);
}

/** One line per change plus diffs for text files; secrets show only that they change. */
export async function planLines(changes: Change[], facts: Facts, host: string, shown?: (cmd: Command) => string): Promise<string[]> {
  const diffable = changes.filter((c): c is PutChange => c.kind === 'put' && !c.secret && isText(c.content));
  const current = diffable.length ? await facts.read([...new Set(diffable.map((c) => c.path))]) : new Map<string, FileFact>();
  const lines: string[] = [];
  for (const c of changes) {
    // A command as it would run: with sudo -n where the login is raised.
    lines.push(shown ? describeChangeAs(c, shown) : describeChange(c));
    if (c.kind !== 'put') continue;
    if (c.secret) {
      lines.push('  content changed (secret, not shown)');
    } else if (!Buffer.isBuffer(c.content) || !isText(c.content)) {
      const size = Buffer.isBuffer(c.content) ? c.content.length : c.content.size;
      lines.push(`  binary content: ${size} bytes`);
    } else {
      const now = current.get(c.path);
      if (now?.tooLarge || (now?.content && !isText(now.content))) {
        lines.push('  current file is binary or too large to diff');
        continue;
      }
      const before = now?.content?.toString('utf8') ?? '';
      const diff = unifiedDiff(before, c.content.toString('utf8'), {
        old: now?.exists ? `${c.path} (now on ${host})` : '/dev/null',
        new: `${c.path} (planned)`,
      });
      lines.push(...(diff ? diff.split('\n').map((l) => `  ${l}`) : ['  content unchanged']));
    }
  }
  return lines;
}

/** True for content that is worth showing as a text diff: UTF-8 without NUL bytes, not huge. */
export function isText(content: PutChange['content']): content is Buffer {
  if (!Buffer.isBuffer(content)) return false;
  if (content.length > 1024 * 1024 || content.includes(0)) return false;
  return Buffer.from(content.toString('utf8'), 'utf8').equals(content);
}
