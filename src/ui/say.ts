// The plainest output there is: one line to a stream (commands' reports, and the modules below
// them that print what they did).
import type { Writable } from 'node:stream';

/** Writes one line to a stream. */
export function say(stream: Writable, line = ''): void {
  stream.write(line + '\n');
}
