# hardway's facts script (src/engine/facts.ts runs it): read-only questions to a machine, answered
# in ONE shell per batch. Requests come on stdin, one per line; one answer per stdout line:
#  `S path` -> `F mode owner size sha256` | `N` (missing) | `D` (not a regular file) | `E` (unreadable)
#  `R path` -> `F mode owner size base64` (`-` instead of base64 if larger than $read_limit) | N | D | E;
#  with $blob set, `*` instead of base64: the content is in the batch's one blob line, `B base64`
#  after the last answer, which holds every `*` file's bytes one after the other in request order
#  (the caller cuts it by their sizes; should a file have changed in between, the lengths do not
#  add up and the caller asks those files again without $blob)
#  `H sha256 path` -> `K` (remembered in the SHA cache for the file as it is now) | `N`
#  `P name base64(cmd)` or `p name cmd` (a one-line command as it is): one of hardway's read-only
#  probes, by the name its registry gives it (src/probes/; the name is for the log and the test
#  machines, the command is what runs) -> `code ANSWER`, where ANSWER is
#  `:text` for stdout `text\n`, `;text` for stdout `text` (one line, no newline); stdout of several
#  lines follows as it is, after `code +` (it ends with a newline) or `code -` (it does not, and
#  one is added), up to the line $end (a random line the caller sets per batch), so no encoding
#  process runs for it.
# The command runs in a subshell (eval: no new sh to start) with stdin and stderr closed.
# Set by the caller before this text: end (the line closing a multi-line answer), blob (non-empty: read files go in one blob line), cache (the SHA cache file), write (non-empty: the run may
# write the cache), fast_min (bytes from which a file is hashed by openssl when it works),
# read_limit (largest file read back), abc_sha256 (SHA-256 of "abc", to test openssl with).
# A run asks a few hundred of these, so each costs as few processes as it can: all S, R and H
# files of a batch get one `stat`, its small S files one `sha256sum`, a probe one subshell, the SHA
# cache one `cat` (read_cache) and a lookup per large file by its numbers (cache_lookup).
# Large files are hashed by openssl when it is there and right: it uses the CPU's SHA instructions
# and is about 4x faster than sha256sum on the binaries every no-op rerun re-checks, but its start-up
# makes it slower on small files. Same SHA-256 either way.
fast=
tab=$(printf '\t')
nl='
'
cachedir=
cacheread=
fast_sha() {
  if [ -z "$fast" ]; then
    f=$(printf abc | openssl dgst -sha256 -r 2>/dev/null); fast=no; [ "${f%% *}" = "$abc_sha256" ] && fast=yes
  fi
  [ "$fast" = yes ]
}
# The lines of $1 into $2_1, $2_2, ... (no process); their number in nlines.
split_lines() {
  nlines=0
  set -f; _ifs=$IFS; IFS=$nl
  for _l in $1; do nlines=$((nlines + 1)); eval "$2_$nlines=\$_l"; done
  IFS=$_ifs; set +f
}
# meta (mode owner size) and ident (inode:ctime) of request $i's file $arg, from the batch's
# stat when it has the file, else from a stat of its own.
file_meta() {
  j=; eval "j=\${x_$i-}"
  if [ -n "$j" ] && [ -n "$batched" ]; then eval "meta=\$m_$j"
  else meta=$(stat -L -c '%a %U:%G %s %i:%Z' -- "$arg") || return 1; fi
  ident=${meta##* }; meta=${meta% *}
}
# Appends KEY DIGEST to the SHA cache, when the run may change the machine.
remember_sum() {
  [ -n "$write" ] || return 0
  # The cache's directory is made once per batch, not once per file.
  [ -n "$cachedir" ] || { mkdir -p "${cache%/*}"; cachedir=1; }
  printf '%s%s\n' "$1" "$2" >> "$cache"
  # Already read: this batch's own lookups find it too.
  [ -z "$cacheread" ] || cache_add "$1" "$2"
}
# One cache line (KEY = `path<TAB>size:inode:ctime<TAB>`, then the digest) into the lookup: in the
# variable named after its size, inode and ctime (digits only, so the name is safe to eval), as
# `<NL>path<TAB>digest` beside any other path of the same numbers (a hard link).
cache_add() {
  _id=${1%"$tab"}; _id=${_id##*"$tab"}; _p=${1%"$tab$_id$tab"}
  case $_id in *[!0-9:]*|:*|*:|*::*) return 0 ;; esac
  _a=${_id%%:*}; _r=${_id#*:}; _b=${_r%%:*}; _c=${_r#*:}
  case $_c in ''|*:*) return 0 ;; esac
  eval "h_${_a}_${_b}_$_c=\${h_${_a}_${_b}_$_c-}\$nl\$_p\$tab\$2"
}
# Reads the SHA cache once, into variables cache_lookup finds a line in without a scan: a pattern
# match of each key over the whole cache text took time that grew with the square of its size
# (dash tries every prefix for `${x#*key}`), most of a worker's no-op CPU once the cache grew.
read_cache() {
  cacheread=1
  _all=$(cat "$cache" 2>/dev/null) || return 0
  set -f; _ifs=$IFS; IFS=$nl
  for _l in $_all; do
    IFS=$tab; set -- $_l; IFS=$nl
    # A line of another shape (a tab in a path, a torn write) is no entry: that file is hashed.
    [ $# = 3 ] && cache_add "$1$tab$2$tab" "$3"
  done
  IFS=$_ifs; set +f
}
# The digest remembered for KEY ($1, as cache_add takes it) into sum ('' when there is none).
cache_lookup() {
  [ -n "$cacheread" ] || read_cache
  sum=
  _id=${1%"$tab"}; _id=${_id##*"$tab"}; _p=${1%"$tab$_id$tab"}
  case $_id in *[!0-9:]*|:*|*:|*::*) return 0 ;; esac
  _a=${_id%%:*}; _r=${_id#*:}; _b=${_r%%:*}; _c=${_r#*:}
  case $_c in ''|*:*) return 0 ;; esac
  eval "_v=\${h_${_a}_${_b}_$_c-}"
  # The first line for this key wins, as it did when the cache text was searched.
  case $_v$nl in *"$nl$_p$tab"*) _v=${_v#*"$nl$_p$tab"}; sum=${_v%%"$nl"*} ;; esac
}
# All requests first (q_1 ... q_n). The regular files among S, R and H (f_1 ... f_k; x_I = J when
# request I is file J) get ONE stat, and the small ones asked with S ONE sha256sum (y_J = their
# line): two processes per batch instead of two per file. Should a count not match (a file
# changed in between), each file is asked on its own.
n=0
while IFS= read -r line; do n=$((n + 1)); eval "q_$n=\$line"; done
k=0; i=0; set --
while [ $i -lt $n ]; do
  i=$((i + 1)); eval "line=\$q_$i"; op=${line%% *}; arg=${line#* }
  [ "$op" = H ] && arg=${arg#* }
  case $op in S|R|H) if [ -f "$arg" ]; then k=$((k + 1)); eval "x_$i=$k; f_$k=\$arg; o_$k=\$op"; set -- "$@" "$arg"; fi ;; esac
done
batched=
if [ $k -gt 0 ] && metas=$(stat -L -c '%a %U:%G %s %i:%Z' -- "$@" 2>/dev/null); then
  split_lines "$metas" m
  if [ $nlines = $k ]; then
    batched=1; j=0; set --
    while [ $j -lt $k ]; do
      j=$((j + 1)); eval "meta=\$m_$j; op=\$o_$j; arg=\$f_$j"; size=${meta% *}; size=${size##* }
      [ "$op" = S ] && [ "$size" -lt "$fast_min" ] && { set -- "$@" "$arg"; eval "y_$j=$#"; }
    done
    if [ $# -gt 0 ]; then
      if sums=$(sha256sum -- "$@" 2>/dev/null); then split_lines "$sums" s; else nlines=0; fi
      # (A name with a backslash makes sha256sum start its line with one, stripped below.)
      [ $nlines = $# ] || batched=
    fi
  fi
fi
# The files asked with R, when the batch's stat has them: ONE cat and ONE base64 for all (r_J = 1),
# not one base64 per file.
blobbed=
if [ -n "$batched" ] && [ -n "$blob" ]; then
  j=0; set --
  while [ $j -lt $k ]; do
    j=$((j + 1)); eval "meta=\$m_$j; op=\$o_$j; arg=\$f_$j"; size=${meta% *}; size=${size##* }
    [ "$op" = R ] && [ "$size" -le "$read_limit" ] && { set -- "$@" "$arg"; eval "r_$j=1"; }
  done
  if [ $# -gt 0 ]; then
    if blobdata=$(cat -- "$@" | base64 -w0); then blobbed=1
    else j=0; while [ $j -lt $k ]; do j=$((j + 1)); eval "r_$j="; done; fi
  fi
fi
i=0
while [ $i -lt $n ]; do
  i=$((i + 1)); eval "line=\$q_$i"; op=${line%% *}; arg=${line#* }
  case $op in
  S|R)
    if [ -f "$arg" ]; then
      file_meta || { echo E; continue; }
      if [ "$op" = S ]; then
        sum=; y=
        if [ "${meta##* }" -ge "$fast_min" ]; then
          key="$arg$tab${meta##* }:$ident$tab"
          # The cache is read once per batch (no grep process per file), then looked up by key.
          cache_lookup "$key"
          if [ -z "$sum" ]; then
            if fast_sha; then sum=$(openssl dgst -sha256 -r < "$arg") || { echo E; continue; }
            else sum=$(sha256sum < "$arg") || { echo E; continue; }; fi
            sum=${sum%% *}
            remember_sum "$key" "$sum"
          fi
        else
          [ -n "$j" ] && [ -n "$batched" ] && eval "y=\${y_$j-}"
          if [ -n "$y" ]; then eval "sum=\$s_$y"; sum=${sum#\\}
          else sum=$(sha256sum < "$arg") || { echo E; continue; }; fi
        fi
        echo "F $meta ${sum%% *}"
      elif [ "${meta##* }" -gt "$read_limit" ]; then
        echo "F $meta -"
      elif [ -n "$j" ] && [ -n "$batched" ] && eval "[ -n \"\${r_$j-}\" ]"; then
        echo "F $meta *"
      else
        data=$(base64 -w0 < "$arg") || { echo E; continue; }
        echo "F $meta $data"
      fi
    elif [ -e "$arg" ]; then echo D
    else echo N; fi ;;
  H)
    # A digest this run just uploaded: remembered for the file as it is now, so the re-plan does
    # not hash it again.
    sum=${arg%% *}; arg=${arg#* }
    if [ -f "$arg" ] && file_meta; then
      remember_sum "$arg$tab${meta##* }:$ident$tab" "$sum"
      echo K
    else echo N; fi ;;
  p|P)
    arg=${arg#* }
    if [ "$op" = P ]; then cmd=$(printf '%s' "$arg" | base64 -d); else cmd=$arg; fi
    # One subshell: the EXIT trap keeps stdout's trailing newlines (the `.`) and the exit code
    # even when the command itself calls exit.
    out=$(trap 'r=$?; echo .; exit $r' EXIT; eval "$cmd" </dev/null 2>/dev/null); code=$?
    out=${out%.}
    case $out in
    *"$nl"*"$nl") printf '%s +\n%s%s\n' "$code" "$out" "$end" ;;
    *"$nl"?*) printf '%s -\n%s\n%s\n' "$code" "$out" "$end" ;;
    *"$nl") printf '%s :%s\n' "$code" "${out%"$nl"}" ;;
    *) printf '%s ;%s\n' "$code" "$out" ;;
    esac ;;
  *) echo E ;;
  esac
done
[ -z "$blobbed" ] || printf 'B %s\n' "$blobdata"
