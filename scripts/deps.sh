#!/usr/bin/env bash
# Install the Debian and npm packages locklab needs, when missing.  As root it
# runs apt-get; otherwise it prints the exact command and fails.
#
#   scripts/deps.sh           everything `make test` needs (the default)
#   scripts/deps.sh --demo    only what `make demo` needs: build the programs
#                             and run PostgreSQL, the server, an agent and the
#                             dashboard (no browser, qemu, kernel source, ...)
#   scripts/deps.sh --images  only what `make images-run` needs: podman,
#                             podman-compose, mmdebstrap and what podman runs
#                             containers with on Debian 12
#   scripts/deps.sh [--demo|--images] --list   print the Debian packages and stop
#
# Add a package here when code starts to need it, never in .ci/run; a package
# only tests use goes to TEST_PACKAGES.
set -euo pipefail

# building the programs and running the service (make demo)
DEMO_PACKAGES=(
  build-essential pkg-config git curl ca-certificates jq procps
  libjansson-dev libgsl-dev libmicrohttpd-dev libpq-dev libcurl4-openssl-dev zlib1g-dev
  nettle-dev  # SHA-256 (tokens, images); its static library goes into the kernel guest
  libgmime-3.0-dev  # mail in and out
  postgresql-15
  bubblewrap gdb  # the agent: sandbox, stacks of a hung run
  openssh-client  # the agent and the tracker: ssh:// git URLs (held to the checked address, netlib/sshpin.c)
  python3  # make demo prints the reply's finding, read with Python's email package
  valgrind  # lockbench: instructions_per_pair (callgrind and its callgrind.h)
  help2man  # make man, make install: the man pages, made from each program's --help
)
# the tests and benchmarks on top
TEST_PACKAGES=(
  perl libcmocka-dev linux-perf clang-format iproute2
  clang libclang-rt-14-dev llvm  # tests/150-fuzz.t, make fuzz: libFuzzer, ASan + UBSan, llvm-symbolizer
  python3-aiosmtpd openssl  # tests/26*-server-mail-*.t: a real SMTP server on loopback, TLS
  docker-compose python3-yaml systemd  # tests/700-deploy.t: compose config, systemd-analyze verify
  dovecot-imapd  # tests/410-mail-intake.t: a real IMAP server
  faketime  # tests/380-agent-clock.t: an agent whose wall clock jumps (libfaketime)
  qemu-system-x86 linux-source-6.1 bc bison flex libelf-dev libssl-dev cpio xz-utils  # lockbench kernel
  chromium  # the dashboard's browser tests use Debian's chromium
)
# make images-run (scripts/images-run.sh): the images and the compose stack
# with Debian's tools; not needed by make test
IMAGE_PACKAGES=(
  podman podman-compose mmdebstrap curl jq ca-certificates
  runc  # crun refuses cgroups in hybrid (v1 + v2) mode; docker/podman/containers.conf picks runc
  netavark aardvark-dns iptables slirp4netns uidmap fuse-overlayfs
)

demo=0 list=0 images=0
for a in "$@"; do
  case $a in
    --demo) demo=1 ;;
    --images) images=1 ;;
    --list) list=1 ;;
    *) echo "deps: unknown option '$a' (valid: --demo, --images, --list)" >&2; exit 2 ;;
  esac
done
if [[ $images -eq 1 ]]; then
  PACKAGES=("${IMAGE_PACKAGES[@]}")
else
  PACKAGES=("${DEMO_PACKAGES[@]}")
  [[ $demo -eq 1 ]] || PACKAGES+=("${TEST_PACKAGES[@]}")
  # node and npm may come with the machine (newer than Debian's): take Debian's only when absent
  command -v npm >/dev/null 2>&1 || PACKAGES+=(nodejs npm)
fi
if [[ $list -eq 1 ]]; then
  printf '%s\n' "${PACKAGES[@]}"
  exit 0
fi

missing=()
for p in "${PACKAGES[@]}"; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$st" == "install ok installed" ]] || missing+=("$p")
done
web_deps() { # the dashboard's npm packages, from the lock file (the demo: no dev ones)
  [[ $images -eq 0 ]] || return 0 # the images run npm ci inside their build
  local top want=web/node_modules/playwright-core/package.json omit=()
  top=$(cd "$(dirname "$0")/.." && pwd)
  if [[ $demo -eq 1 ]]; then want=web/node_modules/uplot/package.json; omit=(--omit=dev); fi
  if [[ ! -f $top/$want || ! -f $top/web/node_modules/.package-lock.json ||
    $top/web/package-lock.json -nt $top/web/node_modules/.package-lock.json ]]; then
    echo "deps: npm ci ${omit[*]} in web/" >&2
    (cd "$top/web" && npm ci "${omit[@]}" --no-audit --no-fund --loglevel=error >&2)
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
