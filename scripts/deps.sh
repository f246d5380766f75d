#!/usr/bin/env bash
# Install the Debian packages locklab needs to build and test, when missing.
# As root it runs apt-get; otherwise it prints the exact command and fails.
# Add a package here when code starts to need it, never in .ci/run.
set -euo pipefail

PACKAGES=(
  build-essential pkg-config git curl ca-certificates perl
  libjansson-dev libgsl-dev libcmocka-dev
  libmicrohttpd-dev libpq-dev libcurl4-openssl-dev libgmime-3.0-dev
  postgresql-15
  gdb linux-perf clang-format bubblewrap
  zlib1g-dev jq python3 procps iproute2
  docker-compose python3-yaml systemd  # tests/70-deploy.t: compose config, systemd-analyze verify
  dovecot-imapd  # tests/41-mail-intake.t: a real IMAP server
  qemu-system-x86 linux-source-6.1 bc bison flex libelf-dev libssl-dev cpio xz-utils  # lockbench kernel
)

# the dashboard's browser tests use Debian's chromium; node and npm may come
# with the machine (newer than Debian's): take Debian's only when absent
PACKAGES+=(chromium)
command -v npm >/dev/null 2>&1 || PACKAGES+=(nodejs npm)

missing=()
for p in "${PACKAGES[@]}"; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$st" == "install ok installed" ]] || missing+=("$p")
done
web_deps() { # the dashboard's npm packages, from the lock file
  local top
  top=$(cd "$(dirname "$0")/.." && pwd)
  if [[ ! -f $top/web/node_modules/.package-lock.json || $top/web/package-lock.json -nt $top/web/node_modules/.package-lock.json ]]; then
    echo "deps: npm ci in web/" >&2
    (cd "$top/web" && npm ci --no-audit --no-fund --loglevel=error >&2)
  fi
}
if [[ ${#missing[@]} -eq 0 ]]; then
  web_deps
  exit 0
fi

line="apt-get install -y ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "deps: missing Debian packages; run as root:" >&2
  echo "  apt-get update && $line" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
web_deps
