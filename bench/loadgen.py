#!/usr/bin/env python3
"""loadgen.py - the load of `make bench-load` (bench/bench-load.sh), stdlib only.

    loadgen.py HOST PORT TOKENS_FILE SUB_IDS_FILE SECONDS READERS

One thread per agent token in TOKENS_FILE (one a line), each on its own
keep-alive connection from its own loopback source address (127.0.1.N, so
the per-address limit counts each agent apart): claim a job, then for each
round the job wants post the base and the patched lockbench-result/1
document with a heartbeat between, until the job wants no more; with
nothing queued, wait 0.2 s and claim again.  READERS dashboard threads
(127.0.2.N) read the submission list, a submission, its report, the agents
and /healthz in turn.  For SECONDS.  Prints one JSON object: results
stored per second, requests and p50/p99 latency (ms) per endpoint, errors
by endpoint and status (a status the protocol expects, such as 409 for a
lease gone, is not an error but is counted under "expected").

For the fault tests (tests/370-faults.t): LOADGEN_PERSIST=1 sends a request
again (the same idempotency key) after a failed connection or a 503, as an
agent's spool would, counting those under "expected" and keeping one 503
body in "sample_503"; LOADGEN_EXIT_IDLE=1 ends an agent when the queue is
empty instead of waiting for more.
"""
import os
import http.client
import json
import random
import re
import sys
import threading
import time

host, port = sys.argv[1], int(sys.argv[2])
tokens = [t.strip() for t in open(sys.argv[3]) if t.strip()]
subs = [s.strip() for s in open(sys.argv[4]) if s.strip()]
seconds, readers = float(sys.argv[5]), int(sys.argv[6])
stop_at = time.monotonic() + seconds
persist = os.environ.get("LOADGEN_PERSIST") == "1"
exit_idle = os.environ.get("LOADGEN_EXIT_IDLE") == "1"
sample_503 = []
lock = threading.Lock()
lat = {}        # endpoint -> [seconds]
errors = {}     # "endpoint status" -> count
expected = {}   # "endpoint status" -> count
stored = [0]
retried = {}    # endpoint -> requests sent again on a new connection


def endpoint(method, path):
    path = path.split("?")[0]
    return method + " " + re.sub(r"/\d+", "/{id}", path)


def doc(variant, rnd, scale):
    rng = random.Random("%s-%d" % (variant, rnd))
    runs = []
    for threads in (1, 2, 4):
        base = 1000000.0 / threads
        s = [round(base * scale * (1 + rng.uniform(-0.002, 0.002)), 3) for _ in range(5)]
        runs.append({"workload": "hot", "lock": "pthread", "params": {"threads": threads},
                     "metrics": {"ops_per_sec": sum(s) / len(s)},
                     "units": {"ops_per_sec": "ops/s"}, "better": {"ops_per_sec": "higher"},
                     "samples": {"ops_per_sec": s}, "per_thread": {}, "lockup": None})
    return json.dumps({"schema": "lockbench-result/1", "suite": "quick", "variant": variant,
                       "round": rnd, "started": "2026-11-29T19:40:00Z",
                       "machine": {"hostname": "load", "cpus": 2, "model": "Test CPU",
                                   "kernel": "6.1.0"}, "runs": runs})


class Client:
    def __init__(self, src, token=None):
        self.src, self.token = src, token
        self.conn = None

    def call(self, method, path, body=None, headers=None, ok=(200, 201, 202), fine=()):
        while True:
            status, doc = self.call_once(method, path, body, headers, ok, fine)
            if not persist or time.monotonic() >= stop_at:
                return status, doc
            if status != 503 and not str(status).startswith("conn:"):
                return status, doc
            time.sleep(0.2)

    def call_once(self, method, path, body, headers, ok, fine):
        h = {"Content-Type": "application/json"}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        h.update(headers or {})
        ep = endpoint(method, path)
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(host, port, timeout=30,
                                                       source_address=(self.src, 0))
            t0 = time.monotonic()
            try:
                self.conn.request(method, path, body=body, headers=h)
                r = self.conn.getresponse()
                data = r.read()
                status = r.status
                if r.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                break
            except (http.client.HTTPException, OSError) as e:
                # a keep-alive connection the server closed while idle: once more on a new one
                self.conn.close()
                self.conn = None
                status, data = "conn:" + type(e).__name__, b""
                if attempt == 0:
                    with lock:
                        retried[ep] = retried.get(ep, 0) + 1
        dt = time.monotonic() - t0
        with lock:
            lat.setdefault(ep, []).append(dt)
            key = "%s %s" % (ep, status)
            if status == 503 and len(sample_503) < 1:
                sample_503.append({"endpoint": ep, "retry_after": r.getheader("Retry-After"),
                                   "body": data.decode("utf-8", "replace")})
            if status in ok:
                pass
            elif status in fine or (persist and (status == 503 or str(status).startswith("conn:"))):
                expected[key] = expected.get(key, 0) + 1
            else:
                errors[key] = errors.get(key, 0) + 1
        try:
            return status, json.loads(data) if data else None
        except ValueError:
            return status, None


def agent(i, token):
    c = Client("127.0.1.%d" % (i + 1), token)
    while time.monotonic() < stop_at:
        status, body = c.call("POST", "/api/v1/jobs/claim", b"")
        job = body.get("job") if isinstance(body, dict) else None
        if not job:
            if exit_idle and status == 200:
                return
            time.sleep(0.2)
            continue
        jid, nxt, rounds = job["id"], job["next_round"], job["rounds"]
        while time.monotonic() < stop_at and nxt < rounds:
            gone = False
            for variant, scale in (("base", 1.0), ("patched", 1.0)):
                status, body = c.call("POST", "/api/v1/jobs/%d/results" % jid,
                                      doc(variant, nxt, scale).encode(),
                                      {"Idempotency-Key": "load-%d-%s-%d" % (jid, variant, nxt)},
                                      fine=(409,))
                if status == 201:
                    with lock:
                        stored[0] += 1
                elif status == 409:
                    gone = True
                    break
                if variant == "base":
                    c.call("POST", "/api/v1/jobs/%d/heartbeat" % jid, b"", fine=(409,))
            if gone or not isinstance(body, dict) or body.get("state") != "running":
                break
            nxt, rounds = body.get("next_round", rounds), body.get("rounds", rounds)
            if body.get("more_rounds", 0) == 0:
                break


def reader(i):
    c = Client("127.0.2.%d" % (i + 1))
    rng = random.Random(i)
    while time.monotonic() < stop_at:
        sid = rng.choice(subs)
        for path in ("/api/v1/submissions?limit=50", "/api/v1/submissions/%s" % sid,
                     "/api/v1/submissions/%s/report" % sid, "/api/v1/agents", "/healthz"):
            c.call("GET", path, fine=(404,))
        time.sleep(0.05)


threads = [threading.Thread(target=agent, args=(i, t), daemon=True) for i, t in enumerate(tokens)]
threads += [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(readers)]
t0 = time.monotonic()
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=seconds + 60)
span = time.monotonic() - t0


def pct(v, p):
    v = sorted(v)
    return round(1000 * v[min(len(v) - 1, int(p * len(v)))], 1)


print(json.dumps({
    "seconds": round(span, 1), "agents": len(tokens), "readers": readers,
    "results_stored": stored[0], "results_per_s": round(stored[0] / span, 1),
    "endpoints": {ep: {"n": len(v), "p50_ms": pct(v, 0.5), "p99_ms": pct(v, 0.99)}
                  for ep, v in sorted(lat.items())},
    "errors": errors, "expected": expected, "retried": retried, "sample_503": sample_503}))
