#!/usr/bin/env bash
# kernel-source.sh - print the path of a cached git checkout of Debian's
# linux-source-6.1, creating it on first use.
#
#   scripts/kernel-source.sh            -> /var/cache/locklab/linux-6.1
#   LOCKLAB_CACHE=DIR scripts/kernel-source.sh
#
# The package is installed with apt-get when missing (root only), unpacked
# once and imported into git with `git add -f` (the tarball's .gitignore
# ignores everything).  Later calls only print the path, so tests and agents
# share one tree.  A lock file serialises concurrent first runs.
set -euo pipefail
cache=${LOCKLAB_CACHE:-/var/cache/locklab}
tree="$cache/linux-6.1"
tarball=/usr/src/linux-source-6.1.tar.xz

die() { echo "kernel-source: $*" >&2; exit 1; }

mkdir -p "$cache" || die "cannot create $cache"
exec 9>"$cache/.linux-6.1.lock"
flock 9

if [[ -f "$tree/.locklab-ready" ]]; then
  echo "$tree"
  exit 0
fi

if [[ ! -f "$tarball" ]]; then
  [[ $(id -u) -eq 0 ]] || die "linux-source-6.1 is not installed; run as root: apt-get install linux-source-6.1"
  echo "kernel-source: installing linux-source-6.1" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends linux-source-6.1 >&2 ||
    { apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends linux-source-6.1 >&2; } ||
    die "apt-get install linux-source-6.1 failed"
  [[ -f "$tarball" ]] || die "$tarball missing after installing linux-source-6.1"
fi

echo "kernel-source: unpacking $tarball into $tree" >&2
rm -rf "$tree" "$tree.tmp"
mkdir -p "$tree.tmp"
tar -xJf "$tarball" -C "$tree.tmp" --strip-components=1 || die "cannot unpack $tarball"
(
  cd "$tree.tmp"
  git init -q
  git config user.name locklab
  git config user.email locklab@localhost
  git config gc.auto 0
  git add -f . >/dev/null
  git commit -q -m "linux-source-6.1 $(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unknown)"
) || die "cannot import the kernel source into git"
mv "$tree.tmp" "$tree"
touch "$tree/.locklab-ready"
echo "$tree"
