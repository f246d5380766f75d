#!/usr/bin/env bash
# kernel-source.sh - print the path of a cached git checkout of Debian's
# linux-source-6.1, creating it on first use.
#
#   scripts/kernel-source.sh            -> /var/cache/locklab/linux-6.1
#   LOCKLAB_CACHE=DIR scripts/kernel-source.sh
#   scripts/kernel-source.sh --copy DEST
#       also make DEST a copy of the tree for a patched variant: files are
#       hard links (instant, and their times stay older than the base build's
#       objects, so `lockbench kernel build --tree DEST --reuse TREE/locklab-out`
#       rebuilds only what a patch touches).  Patch DEST with `git apply` or
#       `patch -p1`: both replace a file instead of writing through the link.
#
# The package is installed with apt-get when missing (root only), unpacked
# once and imported into git with `git add -f` (the tarball's .gitignore
# ignores everything), then packed: a clone of loose objects hard-links
# 83,000 of them, and the first `git commit` or `git am` in the clone starts
# a background `git gc` that repacks them all (about 85 s of CPU and
# minutes of disk) while whatever comes next is measured; a worktree checked
# out of the pack costs a third of the CPU too.  A tree imported loose by an
# older version of this script is packed on its next use.  Later calls only
# print the path, so tests and agents share one tree.  A lock file
# serialises concurrent first runs.
set -euo pipefail
cache=${LOCKLAB_CACHE:-/var/cache/locklab}
tree="$cache/linux-6.1"
tarball=/usr/src/linux-source-6.1.tar.xz

die() { echo "kernel-source: $*" >&2; exit 1; }

copy_to=
if [[ ${1:-} == --copy ]]; then
  [[ -n ${2:-} ]] || die "--copy needs a destination folder"
  copy_to=$2
elif [[ $# -gt 0 ]]; then
  die "unknown argument '$1' (usage: kernel-source.sh [--copy DEST])"
fi

# copy_tree DEST: hard-linked copy without .git and build outputs
copy_tree() {
  local dest=$1 e
  [[ ! -e "$dest" ]] || die "$dest already exists"
  mkdir -p "$dest" || die "cannot create $dest"
  for e in "$tree"/* "$tree"/.[!.]*; do
    case ${e##*/} in .git | locklab-out | locklab-debug-out | .locklab-ready | .locklab-lock) continue ;; esac
    [[ -e "$e" ]] || continue
    # another file system: a plain copy, which keeps the times too
    cp -al "$e" "$dest/" 2>/dev/null || cp -a "$e" "$dest/" || die "cannot copy $e into $dest"
  done
}

mkdir -p "$cache" || die "cannot create $cache"
exec 9>"$cache/.linux-6.1.lock"
flock 9

# pack_tree DIR: the repository's loose objects into one pack (once)
pack_tree() {
  local loose
  loose=$(git -C "$1" count-objects | cut -d' ' -f1) || die "cannot count the objects of $1"
  ((loose > 1000)) || return 0
  echo "kernel-source: packing $loose loose objects of $1 (once)" >&2
  git -C "$1" repack -a -d -q || die "cannot pack the objects of $1"
}

if [[ -f "$tree/.locklab-ready" ]]; then
  pack_tree "$tree"
  [[ -z "$copy_to" ]] || copy_tree "$copy_to"
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
pack_tree "$tree.tmp"
mv "$tree.tmp" "$tree"
touch "$tree/.locklab-ready"
[[ -z "$copy_to" ]] || copy_tree "$copy_to"
echo "$tree"
