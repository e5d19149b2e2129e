// Asking a machine's resolver for names: pin-hosts checks what it pinned, verify checks them all.
import { sh, type Command } from '../../shell.ts';

/** `NAME FIRST-ADDRESS` per name, as the machine's resolver answers (getent hosts). */
export function resolveNames(names: string[]): Command {
  return sh`for n in ${names}; do printf '%s %s\\n' "$n" "$(getent hosts "$n")"; done`;
}
