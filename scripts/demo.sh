#!/usr/bin/env bash
# The local demo, start to finish: installs what it needs, starts a lab of local machines (1
# server, 2 workers: systemd-nspawn with sshd and cloud-init), gets the binaries (Debian's packages
# by default, since this machine may have no internet), runs `hardway up --keep-going`, and prints
# what runs and what is missing. Rerun it at will: every part keeps what is already right.
#   HARDWAY_DEMO_DIR      where the lab's files go (default: ./lab-demo)
#   HARDWAY_SOURCE        release | debian (default: debian)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh" || exit $?
hw() { node "$root/bin/hardway.mjs" "$@"; }
dir=${HARDWAY_DEMO_DIR:-$PWD/lab-demo}

hw lab up --name demo --dir "$dir" || exit $?
cd "$dir" || exit 1
hw download --source "${HARDWAY_SOURCE:-debian}" || exit $?
# Progress goes to the terminal (stderr); the JSON result feeds the report.
hw up --keep-going --api-timeout 30 --json > up.json
code=$?
"$root/node_modules/.bin/tsx" "$root/scripts/demo-report.ts" up.json "$dir"
exit $code
