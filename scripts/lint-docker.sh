#!/usr/bin/env bash
# Lint Dockerfiles: the rules below, which hadolint (not in Debian) would
# mostly check too.  Prints one "FILE:LINE: rule: message" per problem and
# exits 1 when there is any, 2 on bad usage, 0 when clean.
#
#   scripts/lint-docker.sh [--context DIR] [DOCKERFILE...]
#
# Default files: docker/Dockerfile.*; default context (where COPY sources
# are looked up): the repository root, as docker/docker-compose.yml builds.
#
# Rules (per logical instruction, continuation lines joined):
#   from-pin          FROM names a tag or digest, not :latest, no variable
#   apt-yes           apt-get install has -y (--yes, --assume-yes)
#   apt-recommends    apt-get install has --no-install-recommends
#   apt-lists         a RUN with apt-get update/install removes
#                     /var/lib/apt/lists in the same RUN
#   apt-update-alone  apt-get update and apt-get install share one RUN
#   apt-upgrade       no apt-get upgrade / dist-upgrade / full-upgrade
#   apt-not-apt-get   scripts use apt-get, not apt (no stable CLI)
#   user              the final stage ends with a USER that is not root
#   healthcheck       the final stage has a HEALTHCHECK (not NONE)
#   add               COPY, not ADD, for local files (ADD fetches and unpacks)
#   copy-source       every COPY source (without --from) exists in the context
#   copy-from         COPY --from names an earlier stage or a pinned image
#   exec-form         ENTRYPOINT and CMD in JSON (exec) form
#   maintainer        no MAINTAINER (use a LABEL)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
context=$top
files=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --context) [[ $# -ge 2 ]] || { echo "lint-docker: --context needs a folder" >&2; exit 2; }
      context=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "lint-docker: unknown option '$1'" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
if [[ ${#files[@]} -eq 0 ]]; then
  shopt -s nullglob
  files=("$top"/docker/Dockerfile.*)
  shopt -u nullglob
  [[ ${#files[@]} -gt 0 ]] || { echo "lint-docker: no docker/Dockerfile.* to lint" >&2; exit 2; }
fi
[[ -d $context ]] || { echo "lint-docker: context '$context' is not a folder" >&2; exit 2; }

# The awk pass prints "E<TAB>file:line: rule: message" for problems and
# "C<TAB>file<TAB>line<TAB>source" for each COPY source to look up.
# shellcheck disable=SC2016  # awk code, not shell
lint_awk='
function flush(   kw, rest, n, a, i, src, from, img, parts, last) {
  if (inst == "") return
  kw = toupper(inst); sub(/[ \t].*/, "", kw)
  rest = inst; sub(/^[^ \t]+[ \t]*/, "", rest)
  if (kw == "FROM") {
    n = split(rest, a, /[ \t]+/)
    i = 1
    while (i <= n && a[i] ~ /^--/) i++          # --platform=...
    img = a[i]
    stage++; stage_user[stage] = ""; stage_hc[stage] = 0; stage_line[stage] = iline
    stage_base[stage] = tolower(img)
    if (n >= i + 2 && toupper(a[i + 1]) == "AS") { alias[tolower(a[i + 2])] = stage }
    if (tolower(img) in alias) {                 # FROM an earlier stage
      stage_user[stage] = stage_user[alias[tolower(img)]]
      stage_hc[stage] = stage_hc[alias[tolower(img)]]
      stage_user_line[stage] = stage_user_line[alias[tolower(img)]]
    } else if (img == "scratch") {
    } else if (img ~ /\$/) {
      err(iline, "from-pin", "FROM " img " uses a variable: name the image and its tag literally")
    } else if (img ~ /@sha256:[0-9a-f]+$/) {
    } else {
      last = img; sub(/.*\//, "", last)
      if (last !~ /:/) err(iline, "from-pin", "FROM " img " has no tag: pin one (e.g. debian:bookworm-slim)")
      else if (last ~ /:latest$/) err(iline, "from-pin", "FROM " img " uses :latest: pin a real tag")
    }
  } else if (kw == "RUN") {
    run_checks(rest)
  } else if (kw == "USER") {
    u = rest; sub(/[ \t]+$/, "", u)
    stage_user[stage] = u; stage_user_line[stage] = iline
  } else if (kw == "HEALTHCHECK") {
    stage_hc[stage] = (toupper(rest) ~ /^NONE/) ? -1 : 1
  } else if (kw == "ADD") {
    err(iline, "add", "use COPY, not ADD (ADD also fetches URLs and unpacks archives)")
  } else if (kw == "COPY") {
    copy_checks(rest)
  } else if (kw == "ENTRYPOINT" || kw == "CMD") {
    if (rest !~ /^\[/) err(iline, "exec-form", kw " in shell form: write it as a JSON array so signals reach the program")
  } else if (kw == "MAINTAINER") {
    err(iline, "maintainer", "MAINTAINER is deprecated: use LABEL org.opencontainers.image.authors=...")
  }
  inst = ""
}
function run_checks(cmd,   segs, n, i, s, has_update, has_install) {
  if (cmd ~ /(^|[;&|( \t])apt-get[ \t]+([^;&|]*[ \t])?(upgrade|dist-upgrade|full-upgrade)([ \t;&|]|$)/ ||
      cmd ~ /(^|[;&|( \t])apt[ \t]+([^;&|]*[ \t])?(upgrade|full-upgrade)([ \t;&|]|$)/)
    err(iline, "apt-upgrade", "do not upgrade packages in an image: pin and rebuild the base image instead")
  if (cmd ~ /(^|[;&|( \t])apt[ \t]+(-[^ \t]+[ \t]+)*(install|update|remove|upgrade)([ \t]|$)/)
    err(iline, "apt-not-apt-get", "use apt-get, not apt, in scripts")
  n = split(cmd, segs, /&&|\|\||;|\|/)
  for (i = 1; i <= n; i++) {
    s = segs[i]
    if (s ~ /(^|[ \t])apt-get[ \t]+([^ \t]+[ \t]+)*install([ \t]|$)/) {
      has_install = 1
      if (s !~ /(^|[ \t])(-[a-zA-Z]*y[a-zA-Z]*|--yes|--assume-yes)([ \t]|$)/)
        err(iline, "apt-yes", "apt-get install without -y")
      if (s !~ /--no-install-recommends/)
        err(iline, "apt-recommends", "apt-get install without --no-install-recommends")
    }
    if (s ~ /(^|[ \t])apt-get[ \t]+([^ \t]+[ \t]+)*update([ \t]|$)/) has_update = 1
  }
  if (has_update && !has_install)
    err(iline, "apt-update-alone", "apt-get update without apt-get install in the same RUN (a cached update layer goes stale)")
  if ((has_update || has_install) && cmd !~ /rm[ \t]+-[a-zA-Z]*[rR][a-zA-Z]*[ \t]+([^;&|]*[ \t])?\/var\/lib\/apt\/lists/)
    err(iline, "apt-lists", "RUN with apt-get does not remove /var/lib/apt/lists/* in the same RUN")
}
function copy_checks(args,   a, n, i, from, j, m, srcs, s) {
  from = ""
  if (args ~ /^\[/) {                            # JSON form
    gsub(/^\[|\][ \t]*$/, "", args)
    n = split(args, a, /"[ \t]*,[ \t]*"/)
    for (i = 1; i <= n; i++) gsub(/^[ \t]*"|"[ \t]*$/, "", a[i])
  } else {
    n = split(args, a, /[ \t]+/)
  }
  j = 1
  while (j <= n && a[j] ~ /^--/) {
    if (a[j] ~ /^--from=/) { from = a[j]; sub(/^--from=/, "", from) }
    j++
  }
  if (from != "") {
    if (!(tolower(from) in alias) && from !~ /^[0-9]+$/) {
      if (from !~ /[:@\/]/ || from ~ /:latest$/)
        err(iline, "copy-from", "COPY --from=" from " is not an earlier stage nor a pinned image")
    }
    return
  }
  if (n - j < 1) { err(iline, "copy-source", "COPY needs a source and a destination"); return }
  for (i = j; i < n; i++) printf "C\t%s\t%d\t%s\n", FILENAME, iline, a[i]
}
function err(line, rule, msg) { printf "E\t%s:%d: %s: %s\n", FILENAME, line, rule, msg }
function endfile() {
  flush()
  if (stage == 0) { err(1, "from-pin", "no FROM instruction"); return }
  u = stage_user[stage]
  if (u == "") err(stage_line[stage], "user", "the final stage runs as root: add USER with a non-root user")
  else if (u ~ /^(root|0)(:.*)?$/) err(stage_user_line[stage], "user", "the final stage ends as USER " u ": use a non-root user")
  if (stage_hc[stage] <= 0) err(stage_line[stage], "healthcheck", "the final stage has no HEALTHCHECK")
}
FNR == 1 {
  if (NR != 1) endfile()
  inst = ""; stage = 0; delete alias; delete stage_user; delete stage_hc
}
{
  line = $0
  sub(/\r$/, "", line)
  if (line ~ /^[ \t]*#/ || (inst == "" && line ~ /^[ \t]*$/)) next
  if (inst == "") { iline = FNR; inst = line } else inst = inst " " line
  if (inst ~ /\\[ \t]*$/) { sub(/\\[ \t]*$/, "", inst); next }
  gsub(/[ \t]+/, " ", inst); sub(/^ /, "", inst)
  flush()
}
END { if (NR > 0) endfile() }
'

problems=0
report=$(mktemp)
trap 'rm -f "$report"' EXIT
for f in "${files[@]}"; do
  if [[ ! -r $f ]]; then
    echo "$f:0: read: cannot read the file" >>"$report"
    continue
  fi
  if [[ ! -s $f ]]; then
    echo "$f:1: from-pin: empty Dockerfile" >>"$report"
    continue
  fi
  while IFS=$'\t' read -r kind a b c; do
    case $kind in
      E) echo "$a" >>"$report" ;;
      C)
        # $c is a path in the context; globs as Docker expands them
        src=${c#./}
        src=${src#/}
        [[ -z $src ]] && src=.
        shopt -s nullglob
        # shellcheck disable=SC2206  # word splitting is off; the glob is wanted
        matches=("$context"/$src)
        shopt -u nullglob
        if [[ ${#matches[@]} -eq 0 || ! -e ${matches[0]} ]]; then
          echo "$a:$b: copy-source: COPY source '$c' does not exist in the context $context" >>"$report"
        fi
        ;;
    esac
  done < <(awk "$lint_awk" "$f")
done

problems=$(wc -l <"$report")
if [[ $problems -gt 0 ]]; then
  sort -t: -k1,1 -k2,2n "$report"
  echo "lint-docker: ${#files[@]} file(s), $problems problem(s)" >&2
  exit 1
fi
echo "lint-docker: ${#files[@]} file(s) clean"
