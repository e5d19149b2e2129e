#!/usr/bin/env bash
# Installs what hardway and its tests need on a fresh Debian 12 machine, and nothing that is already
# there: the system packages (as root, with apt-get) and the npm dependencies (npm ci).
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t packages < <(grep -Ev '^[[:space:]]*(#|$)' scripts/packages.txt)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# kubectl may come from another source than Debian's kubernetes-client; any kubectl will do.
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "hardway needs these Debian packages: ${missing[*]}" >&2
    echo "  run as root: apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 2
  fi
  echo "installing ${missing[*]} (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# npm ci only when node_modules is missing or older than the lock file.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi

# The CLI bundle (dist/cli): the CLI starts from it instead of compiling TypeScript on every run.
# Rebuilt every time (a fraction of a second) so it is always the sources as they are now.
node scripts/build.mjs
