// Where a dns.source that is not an http(s) URL points on this machine: a path relative to the
// project directory, `~/` for the home directory (as cluster.yaml's other paths), or a file URL
// (file:///abs/path, host empty or localhost), which is an absolute path and never a relative one
// named "file:". Pure, so the source archive and the caddy .deb beside it agree on the place.
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InputError, quote, type Location } from '../errors.ts';

/** The absolute path `source` names; an InputError at `where` for a file URL that names no local file. */
export function localSourcePath(source: string, projectDir: string, home: string, where: Location): string {
  if (/^file:/i.test(source)) {
    try {
      return fileURLToPath(new URL(source));
    } catch {
      throw new InputError(`dns.source: ${quote(source)} is not a file URL of this machine`,
        'write file:///absolute/path (three slashes: no host), a path relative to the project directory, or an http(s) URL', where);
    }
  }
  if (source === '~' || source.startsWith('~/')) return join(home, source.slice(1));
  return isAbsolute(source) ? source : resolve(projectDir, source);
}
