// hardway's version, as package.json says it.
import { readFileSync } from 'node:fs';

/** The version in package.json (this file, and the bundle in dist/cli, are two levels below it). */
export function version(): string {
  try {
    return String((JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
}
