// Facts: read-only questions to a machine, answered in ONE remote command per batch. Requests go
// on stdin (one per line) to a constant script, so the command line stays short whatever the
// number of files, and a fake transport can answer the same protocol in unit tests.
import { sh, type Command } from '../shell.ts';
import type { Transport } from '../transport/types.ts';

/** A regular file's metadata; `sha256` is set by stat requests, `content` by read requests. */
export interface FileFact {
  path: string;
  exists: boolean;
  /** True if something exists at the path that is not a regular file (a directory, a socket). */
  notFile?: boolean;
  mode?: number;
  owner?: string;
  size?: number;
  sha256?: string;
  content?: Buffer;
  /** True if the file was larger than READ_LIMIT and its content was not fetched. */
  tooLarge?: boolean;
}

/** Output of one probe command: exit code and stdout (stderr is dropped; probes only read). */
export interface ProbeResult {
  code: number;
  stdout: string;
}

/** Files larger than this are not read back (they are compared by SHA-256 only). */
export const READ_LIMIT = 1024 * 1024;

/** Files at least this large are hashed with `openssl dgst` where it works (see FACTS_SCRIPT). */
export const FAST_HASH_MIN = 1024 * 1024;

/**
 * Where a machine remembers the SHA-256 of its large files, keyed by path, size, inode and ctime:
 * a no-op rerun then hashes no binary again. An upload is a new inode (temp file + rename) and any
 * write changes the ctime, so a changed file never matches a remembered entry. Written only when
 * the run may change the machine (never under --dry-run).
 */
export const SHA_CACHE = '/var/lib/hardway/sha256.cache';

/** SHA-256 of "abc": openssl is used only if it answers this (not a stub, not a FIPS refusal). */
const SHA256_ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';

/** The batch script. Protocol, one request per stdin line -> one answer per stdout line:
 *  `S path` -> `F mode owner size sha256` | `N` (missing) | `D` (not a regular file) | `E` (unreadable)
 *  `R path` -> `F mode owner size base64` (`-` instead of base64 if larger than READ_LIMIT) | N | D | E
 *  `H sha256 path` -> `K` (remembered in the SHA cache for the file as it is now) | `N`
 *  `C base64(cmd)` or `c cmd` (a one-line command as it is) -> `code ANSWER`, where ANSWER is
 *  `:text` for stdout `text\n`, `;text` for stdout `text` (one line, no newline), else base64(stdout).
 *  The command runs in a subshell (eval: no new sh to start) with stdin and stderr closed.
 *  A run asks a few hundred of these, so each costs as few processes as it can: all S, R and H
 *  files of a batch get one `stat`, its small S files one `sha256sum`, a probe one subshell.
 *  Large files are hashed by openssl when it is there and right: it uses the CPU's SHA instructions
 *  and is about 4x faster than sha256sum on the binaries every no-op rerun re-checks, but its start-up
 *  makes it slower on small files. Same SHA-256 either way. */
export const FACTS_SCRIPT: Command = sh`
fast=
tab=$(printf '\\t')
nl='
'
cachedir=
cacheread=
cached=
cache=\${cache:-${SHA_CACHE}}
fast_sha() {
  if [ -z "$fast" ]; then
    f=$(printf abc | openssl dgst -sha256 -r 2>/dev/null); fast=no; [ "\${f%% *}" = ${SHA256_ABC} ] && fast=yes
  fi
  [ "$fast" = yes ]
}
# The lines of $1 into $2_1, $2_2, ... (no process); their number in nlines.
split_lines() {
  nlines=0
  set -f; _ifs=$IFS; IFS=$nl
  for _l in $1; do nlines=$((nlines + 1)); eval "$2_$nlines=\\$_l"; done
  IFS=$_ifs; set +f
}
# meta (mode owner size) and ident (inode:ctime) of request $i's file $arg, from the batch's
# stat when it has the file, else from a stat of its own.
file_meta() {
  j=; eval "j=\\\${x_$i-}"
  if [ -n "$j" ] && [ -n "$batched" ]; then eval "meta=\\$m_$j"
  else meta=$(stat -L -c '%a %U:%G %s %i:%Z' -- "$arg") || return 1; fi
  ident=\${meta##* }; meta=\${meta% *}
}
# Appends KEY DIGEST to the SHA cache, when the run may change the machine.
remember_sum() {
  [ -n "$write" ] || return 0
  # The cache's directory is made once per batch, not once per file.
  [ -n "$cachedir" ] || { mkdir -p "\${cache%/*}"; cachedir=1; }
  printf '%s%s\\n' "$1" "$2" >> "$cache"
}
# All requests first (q_1 ... q_n). The regular files among S, R and H (f_1 ... f_k; x_I = J when
# request I is file J) get ONE stat, and the small ones asked with S ONE sha256sum (y_J = their
# line): two processes per batch instead of two per file. Should a count not match (a file
# changed in between), each file is asked on its own.
n=0
while IFS= read -r line; do n=$((n + 1)); eval "q_$n=\\$line"; done
k=0; i=0; set --
while [ $i -lt $n ]; do
  i=$((i + 1)); eval "line=\\$q_$i"; op=\${line%% *}; arg=\${line#* }
  [ "$op" = H ] && arg=\${arg#* }
  case $op in S|R|H) if [ -f "$arg" ]; then k=$((k + 1)); eval "x_$i=$k; f_$k=\\$arg; o_$k=\\$op"; set -- "$@" "$arg"; fi ;; esac
done
batched=
if [ $k -gt 0 ] && metas=$(stat -L -c '%a %U:%G %s %i:%Z' -- "$@" 2>/dev/null); then
  split_lines "$metas" m
  if [ $nlines = $k ]; then
    batched=1; j=0; set --
    while [ $j -lt $k ]; do
      j=$((j + 1)); eval "meta=\\$m_$j; op=\\$o_$j; arg=\\$f_$j"; size=\${meta% *}; size=\${size##* }
      [ "$op" = S ] && [ "$size" -lt ${FAST_HASH_MIN} ] && { set -- "$@" "$arg"; eval "y_$j=$#"; }
    done
    if [ $# -gt 0 ]; then
      if sums=$(sha256sum -- "$@" 2>/dev/null); then split_lines "$sums" s; else nlines=0; fi
      # (A name with a backslash makes sha256sum start its line with one, stripped below.)
      [ $nlines = $# ] || batched=
    fi
  fi
fi
i=0
while [ $i -lt $n ]; do
  i=$((i + 1)); eval "line=\\$q_$i"; op=\${line%% *}; arg=\${line#* }
  case $op in
  S|R)
    if [ -f "$arg" ]; then
      file_meta || { echo E; continue; }
      if [ "$op" = S ]; then
        sum=; y=
        if [ "\${meta##* }" -ge ${FAST_HASH_MIN} ]; then
          key="$arg$tab\${meta##* }:$ident$tab"
          # The cache is read once per batch; each lookup is a pattern match, not a grep process.
          [ -n "$cacheread" ] || { cached=$(cat "$cache" 2>/dev/null); cacheread=1; }
          case $cached in *"$key"*) sum=\${cached#*"$key"}; sum=\${sum%%"$nl"*} ;; esac
          if [ -z "$sum" ]; then
            if fast_sha; then sum=$(openssl dgst -sha256 -r < "$arg") || { echo E; continue; }
            else sum=$(sha256sum < "$arg") || { echo E; continue; }; fi
            sum=\${sum%% *}
            remember_sum "$key" "$sum"
          fi
        else
          [ -n "$j" ] && [ -n "$batched" ] && eval "y=\\\${y_$j-}"
          if [ -n "$y" ]; then eval "sum=\\$s_$y"; sum=\${sum#\\\\}
          else sum=$(sha256sum < "$arg") || { echo E; continue; }; fi
        fi
        echo "F $meta \${sum%% *}"
      elif [ "\${meta##* }" -gt ${READ_LIMIT} ]; then
        echo "F $meta -"
      else
        data=$(base64 -w0 < "$arg") || { echo E; continue; }
        echo "F $meta $data"
      fi
    elif [ -e "$arg" ]; then echo D
    else echo N; fi ;;
  H)
    # A digest this run just uploaded: remembered for the file as it is now, so the re-plan does
    # not hash it again.
    sum=\${arg%% *}; arg=\${arg#* }
    if [ -f "$arg" ] && file_meta; then
      remember_sum "$arg$tab\${meta##* }:$ident$tab" "$sum"
      echo K
    else echo N; fi ;;
  c|C)
    if [ "$op" = C ]; then cmd=$(printf '%s' "$arg" | base64 -d); else cmd=$arg; fi
    out=$( (eval "$cmd") </dev/null 2>/dev/null; r=$?; echo .; exit $r); code=$?
    out=\${out%.}
    case $out in
    *"$nl"*"$nl"|*"$nl"?*) printf '%s %s\\n' "$code" "$(printf '%s' "$out" | base64 -w0)" ;;
    *"$nl") printf '%s :%s\\n' "$code" "\${out%"$nl"}" ;;
    *) printf '%s ;%s\\n' "$code" "$out" ;;
    esac ;;
  *) echo E ;;
  esac
done`;

/** One request of a batch. */
export type FactRequest = { op: 'S' | 'R'; path: string } | { op: 'C'; cmd: Command } | { op: 'H'; path: string; sha256: string };

/** Read-only helpers bound to one machine's transport. */
export interface Facts {
  /** SHA-256, mode, owner and size of many files, in one remote command. */
  stat(paths: string[]): Promise<Map<string, FileFact>>;
  /** Content, mode, owner and size of many (text) files, in one remote command. Never for secrets. */
  read(paths: string[]): Promise<Map<string, FileFact>>;
  /** Runs many read-only commands in one remote command; stdout keeps trailing newlines. */
  probe<K extends string>(cmds: Record<K, Command>): Promise<Record<K, ProbeResult>>;
  /** Any mix of the above in one round trip; answers in request order. */
  batch(requests: FactRequest[]): Promise<Array<FileFact | ProbeResult>>;
  /**
   * Queues the SHA-256 of a large file this run has just uploaded: the next batch records it in
   * the machine's SHA cache for the file as it is then, so the re-plan does not hash it again.
   */
  remember(path: string, sha256: string): void;
}

/** Creates the facts helpers for a transport; `log` receives one line per request answered. */
export function createFacts(transport: Transport, log: (line: string) => void = () => {}, opts: { cacheWrites?: boolean; cacheFile?: string } = {}): Facts {
  const cache = sh`cache=${opts.cacheFile ?? SHA_CACHE};`;
  const script = opts.cacheWrites ? sh`${cache} write=1; ${FACTS_SCRIPT}` : sh`${cache} write=; ${FACTS_SCRIPT}`;
  const remembered: FactRequest[] = [];
  const batch = async (asked: FactRequest[]): Promise<Array<FileFact | ProbeResult>> => {
    if (asked.length === 0) return [];
    // Digests to remember go first, so this batch's own lookups already find them.
    const requests = [...remembered.splice(0), ...asked];
    const stdin = requests.map(encodeRequest).join('\n') + '\n';
    const r = await transport.exec(script, { stdin });
    const lines = r.stdout.split('\n');
    if (r.code !== 0 || lines.length < requests.length) {
      throw new Error(`${transport.machine}: reading facts failed (exit ${r.code}): ${r.stderr.trim() || 'short output'}`);
    }
    const answers = requests.map((req, i) => {
      const answer = decodeAnswer(req, lines[i]!);
      log(describeAnswer(req, answer));
      return answer;
    });
    return answers.slice(requests.length - asked.length);
  };
  const files = async (op: 'S' | 'R', paths: string[]) => {
    const answers = await batch(paths.map((path) => ({ op, path })));
    return new Map(answers.map((a) => [(a as FileFact).path, a as FileFact]));
  };
  return {
    batch,
    remember: (path, sha256) => void remembered.push({ op: 'H', path, sha256 }),
    stat: (paths) => files('S', paths),
    read: (paths) => files('R', paths),
    async probe(cmds) {
      const keys = Object.keys(cmds) as (keyof typeof cmds)[];
      const answers = await batch(keys.map((k) => ({ op: 'C', cmd: cmds[k] })));
      return Object.fromEntries(keys.map((k, i) => [k, answers[i]])) as Record<keyof typeof cmds, ProbeResult>;
    },
  };
}

/** Encodes one request as a stdin line (exported for the fake transport's tests). */
export function encodeRequest(req: FactRequest): string {
  if (req.op === 'C') return /[\n\r]/.test(req.cmd.text) ? `C ${Buffer.from(req.cmd.text).toString('base64')}` : `c ${req.cmd.text}`;
  if (/[\n\r]/.test(req.path) || req.path === '') throw new Error(`unsupported path for facts: ${JSON.stringify(req.path)}`);
  if (req.op === 'H') {
    if (!/^[0-9a-f]{64}$/.test(req.sha256)) throw new Error(`not a SHA-256: ${JSON.stringify(req.sha256)}`);
    return `H ${req.sha256} ${req.path}`;
  }
  return `${req.op} ${req.path}`;
}

function decodeAnswer(req: FactRequest, line: string): FileFact | ProbeResult {
  if (req.op === 'C') {
    const space = line.indexOf(' ');
    const answer = space < 0 ? '' : line.slice(space + 1);
    const stdout = answer.startsWith(':') ? `${answer.slice(1)}\n` : answer.startsWith(';') ? answer.slice(1) : Buffer.from(answer, 'base64').toString('utf8');
    return { code: Number(space < 0 ? line : line.slice(0, space)), stdout };
  }
  const parts = line.split(' ');
  const path = req.path;
  if (req.op === 'H') return { path, exists: parts[0] === 'K' };
  if (parts[0] === 'N') return { path, exists: false };
  if (parts[0] === 'D') return { path, exists: true, notFile: true };
  if (parts[0] !== 'F' || parts.length < 5) throw new Error(`cannot read ${path} (permission denied or unreadable)`);
  const fact: FileFact = { path, exists: true, mode: parseInt(parts[1]!, 8), owner: parts[2]!, size: Number(parts[3]) };
  if (req.op === 'S') fact.sha256 = parts[4]!;
  else if (parts[4] === '-') fact.tooLarge = true;
  else fact.content = Buffer.from(parts[4]!, 'base64');
  return fact;
}

function describeAnswer(req: FactRequest, a: FileFact | ProbeResult): string {
  if (req.op === 'C') {
    const out = (a as ProbeResult).stdout.replace(/\n$/, '');
    return `probe (exit ${(a as ProbeResult).code}): ${req.cmd.text}${out ? `\n--- stdout:\n${out.slice(0, 4000)}` : ''}`;
  }
  const f = a as FileFact;
  if (req.op === 'H') return `remember the SHA-256 of ${f.path} (just uploaded): ${f.exists ? 'done' : 'not there'}`;
  if (!f.exists) return `${req.op === 'S' ? 'stat' : 'read'} ${f.path}: missing`;
  if (f.notFile) return `${req.op === 'S' ? 'stat' : 'read'} ${f.path}: not a regular file`;
  return `${req.op === 'S' ? 'stat' : 'read'} ${f.path}: mode ${formatMode(f.mode!)} ${f.owner} ${f.size} bytes`;
}

/** A mode as the user writes it: 0644. */
export function formatMode(mode: number): string {
  return '0' + (mode & 0o7777).toString(8).padStart(3, '0');
}
