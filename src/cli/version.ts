// Where hardway is installed, and its version as package.json says it. This file, and the bundle
// in dist/cli, are two levels below the package root.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The directory hardway is installed in (package.json, node_modules/), with a trailing slash. */
export function packageRoot(): string {
  return fileURLToPath(new URL('../../', import.meta.url));
}

/** The version in package.json. */
export function version(): string {
  try {
    return String((JSON.parse(readFileSync(`${packageRoot()}package.json`, 'utf8')) as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
}
