// The upload of a login raised with sudo. SFTP runs as the login user, who can neither write root's
// directories nor even reach some of them (containerd makes /etc/cni/net.d 0700), and a staging
// place the user can reach may be on another file system than the target (a copy, not a rename).
// So the bytes go as the stdin of one raised command, which writes them as root under umask 077
// into the usual temp file beside the target (0600 from its first byte: nobody else can read it),
// checks that every byte arrived (a run killed midway ends the stream early: cat sees EOF), sets
// owner and mode (chown first: it clears setuid bits), fsyncs, and renames it over the target. A
// failure removes the temp file; a killed run's is removed by the next run's first upload into the
// same directory (prepareDirCommand), as an SFTP upload's is.
import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { CommandError } from '../errors.ts';
import { joinCommands, sh, type Command } from '../shell.ts';
import type { ExecResult, UploadSource } from './types.ts';

/** One raised upload: target, its temp file beside it, the bytes, the mode and numeric owner. */
export interface RaisedUpload {
  path: string;
  tmp: string;
  source: UploadSource;
  mode: number;
  ids: [number, number];
}

/** Writes the source over path through one raised command fed the bytes on stdin. */
export async function uploadRaised(machine: string, run: (cmd: Command, input: Buffer | Readable) => Promise<ExecResult>, u: RaisedUpload): Promise<void> {
  const size = 'data' in u.source ? u.source.data.length : statSync(u.source.file).size;
  const cmd = raisedUploadCommand(u, size);
  const input = 'data' in u.source ? u.source.data : createReadStream(u.source.file, { highWaterMark: 1024 * 1024 });
  let r: ExecResult;
  try {
    r = await run(cmd, input);
  } finally {
    // A command that never started never read the file: close it.
    if (!Buffer.isBuffer(input)) input.destroy();
  }
  if (r.code !== 0) throw new CommandError(machine, cmd.text, r.code, r.stderr);
}

/** The command that takes the bytes on stdin and puts them over the target (see the top of this file). */
export function raisedUploadCommand(u: Omit<RaisedUpload, 'source'>, size: number): Command {
  const { tmp, path } = u;
  const owner = `${u.ids[0]}:${u.ids[1]}`;
  const mode = u.mode.toString(8).padStart(4, '0');
  const cutShort = sh`echo "upload cut short: $n of ${size} bytes arrived" >&2`;
  return joinCommands([
    sh`umask 077`,
    sh`{ cat > ${tmp} || { rm -f -- ${tmp}; exit 1; }; }`,
    sh`n=$(stat -c %s -- ${tmp})`,
    sh`{ [ "$n" = ${size} ] || { rm -f -- ${tmp}; ${cutShort}; exit 1; }; }`,
    sh`{ chown -- ${owner} ${tmp} && chmod -- ${mode} ${tmp} && sync -- ${tmp} && mv -f -T -- ${tmp} ${path} || { rm -f -- ${tmp}; exit 1; }; }`,
  ]);
}
