// The support bundle's Redactor learns every secret of pki/ by reading its files as a stream, line
// by line, never a file whole: hardway's own files there are a few KB, but whatever else lies in
// pki/ (a 600 MB image copied there by mistake) must not exhaust memory or exceed the longest string
// Node can hold. A small file is also registered whole, as the run's Redactor registers a secret.
import { createReadStream, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FailureError } from '../errors.ts';
import { displayPath, pathError } from '../input-file.ts';
import { Redactor } from '../ui/redact.ts';

/** A file up to this size is also registered whole (the largest hardway writes in pki/ is a kubeconfig of a few KB). */
const WHOLE_FILE_MAX = 1 << 20;
/** A line longer than this is no key's or token's: read past, never held. */
const LINE_MAX = 64 << 10;
/** What one file may register at most; more means it is not a file of secrets hardway could search the bundle for. */
const REGISTERED_MAX = 16 << 20;

/** A Redactor that knows every secret of pki/: each file that is not a certificate (keys, kubeconfigs, the encryption config, tokens). */
export async function pkiRedactor(projectDir: string): Promise<Redactor> {
  const redactor = new Redactor();
  for (const file of filesUnder(join(projectDir, 'pki'))) {
    if (file.endsWith('.crt')) continue;
    try {
      await registerFile(redactor, file);
    } catch (e) {
      // A file that cannot be read (no permission, an I/O error) is named, never a stack trace.
      throw pathError(e, displayPath(file)) ?? e;
    }
  }
  return redactor;
}

/** Registers the secrets of one file, streamed: each line as it ends, the whole text only if the file is small. */
async function registerFile(redactor: Redactor, file: string): Promise<void> {
  const head: Buffer[] = [];
  let size = 0;
  let line: Buffer[] = [];
  let lineLength = 0;
  let registered = 0;
  const endLine = () => {
    if (lineLength <= LINE_MAX && lineLength > 0) registered += redactor.addLine(Buffer.concat(line).toString('utf8'));
    line = [];
    lineLength = 0;
    if (registered > REGISTERED_MAX) {
      throw new FailureError(`${displayPath(file)} holds more key-like lines than any file hardway keeps in pki/ (over ${REGISTERED_MAX >> 20} MB of them): the bundle cannot be searched for all of them`,
        'move that file out of pki/ (hardway made none like it), then run doctor --bundle again');
    }
  };
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= WHOLE_FILE_MAX) head.push(chunk);
    let from = 0;
    for (let nl = chunk.indexOf(10); ; nl = chunk.indexOf(10, from)) {
      const end = nl === -1 ? chunk.length : nl;
      // Only the first LINE_MAX + 1 bytes of a line are kept: enough to know it is too long.
      if (lineLength <= LINE_MAX) line.push(chunk.subarray(from, Math.min(end, from + LINE_MAX + 1 - lineLength)));
      lineLength += end - from;
      if (nl === -1) break;
      endLine();
      from = nl + 1;
    }
  }
  endLine();
  // The whole text too, as Redactor.add registers it (its lines were registered above).
  if (size <= WHOLE_FILE_MAX) {
    const text = Buffer.concat(head).toString('utf8');
    if (text.trim().length >= 8) redactor.add(text);
  }
}

function filesUnder(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    const path = join(dir, n);
    const st = statSync(path, { throwIfNoEntry: false });
    return st?.isDirectory() ? filesUnder(path) : st?.isFile() ? [path] : [];
  });
}
