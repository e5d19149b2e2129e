// A probe for tests of the facts protocol itself: it runs the command it is given. Only facts made
// with TEST_PROBES accept it (production facts refuse any probe outside src/probes/index.ts).
import type { Command } from '../../src/shell.ts';
import { probe, waitProbe } from '../../src/probes/probe.ts';

/** Asks exactly `cmd` (protocol tests: answers byte for byte, exit codes, order). */
export const shellProbe = probe('test-shell', (cmd: Command) => cmd);

/** A wait that runs exactly `cmd`. */
export const shellWait = waitProbe('test-wait', (_timeoutS: number, cmd: Command) => cmd);

/** The registry for facts that accept the test probes. */
export const TEST_PROBES: ReadonlyMap<string, object> = new Map<string, object>([[shellProbe.name, shellProbe], [shellWait.name, shellWait]]);
