#!/usr/bin/env bash
# The local demo, start to finish: installs what it needs, starts a lab of local machines (1
# server, 2 workers: systemd-nspawn with sshd and cloud-init), gets the binaries (Debian's packages,
# and the Kubernetes v1.20.2 server binaries built from Debian's source package, since this machine
# may have no internet), builds the offline pause, web and CoreDNS images, runs `hardway up --keep-going`,
# then `hardway smoke` with the offline web image, and prints what runs, the nodes, and what failed.
# Rerun it at will: every part keeps what is already right.
#   HARDWAY_DEMO_DIR      where the lab's files go (default: ./lab-demo)
#   HARDWAY_SOURCE        release | debian (default: debian)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh" || exit $?
hw() { node "$root/bin/hardway.mjs" "$@"; }
dir=${HARDWAY_DEMO_DIR:-$PWD/lab-demo}

hw lab up --name demo --dir "$dir" || exit $?
cd "$dir" || exit 1
# CoreDNS is built offline from the upstream source archive in ../shared/third_party, when there is one.
"$root/node_modules/.bin/tsx" "$root/scripts/coredns-source.ts" "$dir" || exit $?
hw download --source "${HARDWAY_SOURCE:-debian}" || exit $?
hw build-images || exit $?
# Progress goes to the terminal (stderr); the JSON result feeds the report.
hw up --keep-going --json > up.json
code=$?
if [ "$code" -eq 0 ]; then
  hw smoke --web-image localhost/hardway/web:1 --json > smoke.json
  code=$?
else
  echo '{"ok":false,"changed":0,"failed":0,"results":[]}' > smoke.json
fi
"$root/node_modules/.bin/tsx" "$root/scripts/demo-report.ts" up.json smoke.json "$dir"
exit $code
