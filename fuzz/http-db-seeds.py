#!/usr/bin/env python3
"""Write the HTTP target's database seeds, fuzz/corpus/http/db-*.http.

Each seed is one connection's pipelined requests on a fresh database (the
harness empties it before each input and makes the fuzz tokens), so ids
start at 1: a submission is 1, its job 1.  Run again after an API change:
    fuzz/http-db-seeds.py fuzz/corpus/http
"""
import json
import os
import sys

ADMIN = "fuzz-admin-token-0123456789"
AGENT = "fuzz-agent-token-0123456789"
AGENT2 = "fuzz-agent2-token-0123456789"

MBOX = """From mboxrd@z Thu Jan  1 00:00:00 1970
From: Dev One <dev@example.org>
To: locking@vger.example.org
Date: Mon, 30 Nov 2026 10:00:01 +0000
Message-ID: <p1@example.org>
Subject: [PATCH] locking/kmutex: spin less

Commit message line.

Signed-off-by: Dev One <dev@example.org>
---
diff --git a/lockbench/locks/kmutex.c b/lockbench/locks/kmutex.c
index 1111111..2222222 100644
--- a/lockbench/locks/kmutex.c
+++ b/lockbench/locks/kmutex.c
@@ -1,3 +1,3 @@
 int a;
-int b;
+int c;
 int d;
"""


def req(method, path, body=None, token=None, headers=()):
    lines = [f"{method} {path} HTTP/1.1", "Host: x"]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    lines.extend(headers)
    data = b""
    if body is not None:
        data = (body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))).encode()
        lines.append("Content-Type: application/json")
        lines.append(f"Content-Length: {len(data)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def submit(**extra):
    return req("POST", "/api/v1/submissions", dict({"mbox": MBOX, "suites": ["smoke"]}, **extra))


def result(variant, rnd, ns):
    return {"machine": {"cpus": 2, "hostname": "vm", "kernel": "6.1", "model": "x"},
            "round": rnd, "runs": [{"better": {"ns_per_pair": "lower"}, "lock": "kmutex", "lockup": None,
                                    "metrics": {"ns_per_pair": ns}, "params": {"duration_ms": 10, "threads": 1},
                                    "per_thread": {}, "samples": {"ns_per_pair": [ns, ns * 1.01, ns * 0.99]},
                                    "units": {"ns_per_pair": "ns"}, "workload": "uncontended"}],
            "schema": "lockbench-result/1", "started": "2026-12-01T03:13:28Z", "suite": "smoke",
            "variant": variant}


def post(variant, rnd, ns, key=None, token=AGENT):
    key = key or f"job1-c1-{variant}-r{rnd}"
    return req("POST", "/api/v1/jobs/1/results", result(variant, rnd, ns), AGENT if token is None else token,
               [f"Idempotency-Key: {key}"])


def rounds(n, slower):
    out = b""
    for r in range(n):
        base = 17.5 + 0.1 * r
        out += post("base", r, base) + post("patched", r, base * slower + 0.05 * (r % 2))
    return out


def reads():
    return (req("GET", "/api/v1/submissions/1") + req("GET", "/api/v1/submissions/1/results")
            + req("GET", "/api/v1/submissions/1/report?format=text")
            + req("GET", "/api/v1/submissions/1/report?format=lkp")
            + req("GET", "/api/v1/submissions/1/reply") + req("GET", "/api/v1/outbox?submission=1")
            + req("POST", "/api/v1/outbox/1/retry", None, ADMIN)
            + req("GET", "/api/v1/history?lock=kmutex&workload=uncontended&metric=ns_per_pair"))


def lockup_doc():
    doc = result("patched", 2, 18.0)
    doc["runs"].append({"better": {}, "lock": "kmutex", "metrics": {}, "params": {"duration_ms": 10, "threads": 2},
                        "per_thread": {}, "samples": {}, "units": {}, "workload": "hot",
                        "lockup": {"kind": "stall", "message": "no progress for 2.0 s",
                                   "stacks": "Thread 2 (LWP 12):\n#0  0x00007f in syscall () from libc.so.6\n"
                                             "#1  futex_wait (word=0x5) at lockbench/locks/kmutex.c:88\n"
                                             "[pid 12] state S wchan futex_wait_queue\n"}})
    doc["splats"] = [{"key": "lockdep:possible circular locking",
                      "message": "WARNING: possible circular locking dependency detected",
                      "lines": "WARNING: possible circular locking dependency detected\n6.1.0 #1 Not tainted\n",
                      "boot": "1"}]
    return doc


def chunked(method, path, body, token):
    data = json.dumps(body, separators=(",", ":")).encode()
    head = (f"{method} {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").encode()
    half = len(data) // 2
    return (head + b"%x\r\n" % half + data[:half] + b"\r\n" + b"%x\r\n" % (len(data) - half)
            + data[half:] + b"\r\n0\r\n\r\n")


CLAIM = req("POST", "/api/v1/jobs/claim", "{}", AGENT)

seeds = {
    "db-submit-mbox": submit(notify="Dev One <dev@example.org>") + req("GET", "/api/v1/submissions/1")
    + req("GET", "/api/v1/submissions?state=queued&limit=5") + req("GET", "/metrics"),
    "db-submit-git": req("POST", "/api/v1/submissions",
                         {"git": {"url": "https://git.example.org/linux.git", "ref": "locking/core", "base": "v6.1"},
                          "suites": ["smoke", "quick"]}) + CLAIM,
    "db-claim-lease": submit() + req("POST", "/api/v1/jobs/claim", "{}", AGENT, ["Idempotency-Key: claim-0123"])
    + req("POST", "/api/v1/jobs/claim", "{}", AGENT, ["Idempotency-Key: claim-0123"])
    + req("POST", "/api/v1/jobs/1/heartbeat", "{}", AGENT) + req("POST", "/api/v1/jobs/1/heartbeat", "{}", AGENT2)
    + post("base", 0, 17.5) + post("base", 0, 17.5) + post("base", 0, 17.5, key="other-key")
    + post("base", 0, 17.5, token=AGENT2) + req("POST", "/api/v1/jobs/1/release", None, AGENT)
    + req("POST", "/api/v1/jobs/claim", "{}", AGENT2) + post("patched", 0, 18.0, key="job1-c2-patched-r0", token=AGENT2)
    + req("POST", "/api/v1/jobs/1/fail", {"reason": "git am: patch does not apply"}, AGENT2)
    + req("GET", "/api/v1/agents"),
    "db-job-nochange": submit() + CLAIM + rounds(3, 1.0) + reads(),
    "db-job-regression": submit() + CLAIM + rounds(6, 1.3) + req("GET", "/api/v1/submissions/1/report?format=aim7")
    + req("GET", "/api/v1/submissions/1/reply"),
    "db-job-lockup": submit() + CLAIM + post("base", 0, 17.5) + post("patched", 0, 17.6) + post("base", 1, 17.5)
    + post("patched", 1, 17.6) + post("base", 2, 17.5)
    + req("POST", "/api/v1/jobs/1/results", {"idempotency_key": "job1-c1-patched-r2", "result": lockup_doc()}, AGENT)
    + req("GET", "/api/v1/submissions/1/report?format=perf") + req("GET", "/api/v1/submissions/1/reply"),
    "db-results-chunked": submit() + CLAIM
    + chunked("POST", "/api/v1/jobs/1/results", {"idempotency_key": "k0", "result": result("base", 0, 17.5)}, AGENT)
    + chunked("POST", "/api/v1/jobs/1/results", {"idempotency_key": "k1", "result": result("patch-1", 0, 17.6)},
              AGENT),
    "db-noise-plan": req("POST", "/api/v1/noise",
                         {"suite": "smoke", "rounds": 3, "round_seconds": 41.5,
                          "points": [{"workload": "uncontended", "lock": "kmutex", "params": "duration_ms=10,threads=1",
                                      "metric": "ns_per_pair", "users": 1, "sd": 0.021},
                                     {"workload": "hot", "lock": "kmutex", "params": "threads=2",
                                      "metric": "ops_per_sec", "users": 2, "sd": 0.4}]}, AGENT)
    + req("GET", "/api/v1/noise?machine_class=default&suite=smoke") + submit() + CLAIM,
    "db-trees": req("POST", "/api/v1/trees",
                    {"name": "tip", "url": "https://git.example.org/tip.git", "branch": "locking/core",
                     "kind": "native", "track": True, "suites": ["smoke"], "list": "locks@example.org"}, ADMIN)
    + req("POST", "/api/v1/trees", {"name": "tip", "url": "https://git.example.org/tip.git"}, ADMIN)
    + req("GET", "/api/v1/trees") + req("POST", "/api/v1/trees/1/poke", None, ADMIN) + submit(tree="tip")
    + req("PATCH", "/api/v1/alerts/1", {"state": "invalid", "who": "tester", "note": "a fuzz seed"}, ADMIN) + req("GET", "/api/v1/alerts"),
    "db-register": req("POST", "/api/v1/agents/register", {"name": "lab1", "machine_class": "xeon-2s"}, ADMIN)
    + req("POST", "/api/v1/agents/register", {"name": "ci", "role": "submitter"}, ADMIN)
    + req("GET", "/api/v1/agents") + submit() + req("GET", "/api/v1/submissions/1"),
}

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "http")
for name, data in seeds.items():
    if len(data) > 16384:
        sys.exit(f"{name}: {len(data)} bytes, over the 16 KiB the fuzzer takes")
    with open(os.path.join(out, name + ".http"), "wb") as f:
        f.write(data)
    print(f"{name}.http: {len(data)} bytes")
