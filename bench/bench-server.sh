#!/usr/bin/env bash
# bench/bench-server.sh - `make bench-server`: result ingest and read
# latency of locklab-server on this machine, database on the same machine.
#
#   ingest: POSTS result documents (each a round of 10 runs x 5 samples =
#           50 samples), sent by curl over PARALLEL keep-alive connections;
#           prints posts per second (goal: >= 1000/s on 2 cores)
#   read:   with the samples of the ingest stored (>= 1,000,000 with the
#           default POSTS), p50/p99 of GET /api/v1/submissions/{id} and
#           .../report?format=text over READS requests (goal: p99 < 50 ms)
#
#   mail:   `make bench-server` first runs build/bench-mbox: messages parsed per
#           CPU second for a 20,000-message mbox, and the machine
#
# Needs build/locklab-server, PostgreSQL 15, curl, python3, jq.
set -uo pipefail
POSTS=${POSTS:-20000}
PARALLEL=${PARALLEL:-4}
READS=${READS:-400}
JOBS=${JOBS:-100}
source "$(dirname "$0")/../tests/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

rounds=$(((POSTS + 2 * JOBS - 1) / (2 * JOBS)))
pg_start || exit 1
server_start --min-rounds "$rounds" --max-rounds "$rounds" --max-connections 64 \
  --lease-seconds 3600 || exit 1
echo "bench-server: $POSTS posts over $JOBS jobs ($rounds rounds each), $PARALLEL connections"

register_agent
A=$AGENT_TOKEN
make_series "$T/s" >/dev/null || exit 1
jq -Rs '{mbox: .}' "$T/s/series.mbox" >"$T/req.json"
jobs=()
for ((i = 0; i < JOBS; i++)); do
  api POST /api/v1/submissions -d @"$T/req.json"
  claim "$A"
  jobs+=("$JOB")
done

# the documents and a curl config that posts each once
mkdir -p "$T/docs"
python3 - "$T/docs" "$URL" "$A" "$POSTS" "$rounds" "${jobs[@]}" >"$T/post.cfg" <<'PY'
import json, random, sys
out, url, token, posts, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
jobs = sys.argv[6:]
rng = random.Random(1)
n = 0
order = [(job, r, v) for r in range(rounds) for v in ("base", "patched") for job in jobs]
for job, r, variant in order:
            if n == posts:
                break
            runs = []
            for lock in ("pthread", "ticket"):
                for threads in (1, 2, 4, 8, 16):
                    s = [round(1e6 / threads * rng.uniform(0.98, 1.02), 3) for _ in range(5)]
                    runs.append({"workload": "hot", "lock": lock, "params": {"threads": threads},
                                 "metrics": {"ops_per_sec": sum(s) / 5},
                                 "units": {"ops_per_sec": "ops/s"},
                                 "better": {"ops_per_sec": "higher"},
                                 "samples": {"ops_per_sec": s}, "per_thread": {}, "lockup": None})
            doc = {"schema": "lockbench-result/1", "suite": "quick", "variant": variant,
                   "round": r, "started": "2026-11-29T19:40:00Z",
                   "machine": {"hostname": "bench", "cpus": 2, "model": "x", "kernel": "6.1"},
                   "runs": runs}
            path = "%s/%s-%s-%d.json" % (out, job, variant, r)
            with open(path, "w") as f:
                json.dump(doc, f)
            print('url = "%s/api/v1/jobs/%s/results"' % (url, job))
            print('header = "Authorization: Bearer %s"' % token)
            print('header = "Idempotency-Key: bench-%s-%s-%d"' % (job, variant, r))
            print('header = "Content-Type: application/json"')
            print('data-binary = "@%s"' % path)
            print('output = "/dev/null"')
            print('write-out = "%{http_code}\\n"')
            print("next")
            n += 1
PY

sed -i '$ d' "$T/post.cfg"
start=$(date +%s.%N)
curl -sS -Z --parallel-max "$PARALLEL" -K "$T/post.cfg" >"$T/codes" 2>"$T/curl.err"
end=$(date +%s.%N)
ok_posts=$(grep -c '^20[01]$' "$T/codes")
bad=$(grep -vc '^20[01]$' "$T/codes")
[[ $bad -gt 0 ]] && echo "bench-server: refused posts by status: $(grep -v '^20[01]$' "$T/codes" | sort | uniq -c | tr '\n' ' ')"
rate=$(python3 -c "print('%.0f' % ($ok_posts / ($end - $start)))")
samples=$(sql "SELECT coalesce(sum(cardinality(samples)), 0) FROM samples")
printf 'ingest: %d posts in %.1f s = %s posts/s (%d refused), %s samples stored (goal >= 1000/s)\n' \
  "$ok_posts" "$(python3 -c "print($end - $start)")" "$rate" "$bad" "$samples"

# read latency: detail and text report of random submissions, one keep-alive connection each
subs=$(sql "SELECT max(id) FROM submissions")
for kind in detail report; do
  python3 - "$URL" "$subs" "$READS" "$kind" >"$T/get.cfg" <<'PY'
import random, sys
url, subs, reads, kind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = random.Random(2)
for _ in range(reads):
    sid = rng.randint(1, subs)
    path = "/api/v1/submissions/%d" % sid + ("/report?format=text" if kind == "report" else "")
    print('url = "%s%s"' % (url, path))
    print('output = "/dev/null"')
    print('write-out = "%{http_code} %{time_total}\\n"')
    print("next")
PY
  sed -i '$ d' "$T/get.cfg"
  curl -sS -K "$T/get.cfg" >"$T/times.$kind"
  python3 - "$kind" "$T/times.$kind" <<'PY'
import sys
kind, path = sys.argv[1], sys.argv[2]
rows = [l.split() for l in open(path) if l.strip()]
t = sorted(float(r[1]) * 1000 for r in rows if r[0] == "200")
bad = sum(1 for r in rows if r[0] != "200")
pct = lambda p: t[min(len(t) - 1, int(p / 100 * len(t)))] if t else float("nan")
print("read %-6s: %d requests, p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d not 200; goal p99 < 50 ms)"
      % (kind, len(t), pct(50), pct(99), t[-1] if t else float("nan"), bad))
PY
done
