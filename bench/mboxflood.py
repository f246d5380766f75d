#!/usr/bin/env python3
"""mboxflood.py - /healthz latency while clients post big mboxes.

  mboxflood.py URL CLIENTS MAILS SECONDS

CLIENTS threads post, one after another for SECONDS, an mbox of MAILS empty
mails (75,000 are about 3.6 MB) to URL/api/v1/submissions, while one more
client asks URL/healthz every 50 ms on a fresh connection.  Prints one JSON
object: the /healthz latencies (p50, p99, max, in ms; a failure counts as
the time it took), how many /healthz were not 200, and the mbox posts by
status.
"""
import json
import sys
import threading
import time
import urllib.error
import urllib.request


def post(url, body):
    req = urllib.request.Request(url + "/api/v1/submissions", data=body,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            r.read()
            return str(r.status)
    except urllib.error.HTTPError as e:
        return str(e.code)
    except OSError:
        return "error"


def main():
    url, clients, mails, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    body = json.dumps({"mbox": "From x@y Mon Sep 17 00:00:00 2001\nSubject: a\n\n" * mails}).encode()
    stop = time.monotonic() + seconds
    statuses = {}
    lock = threading.Lock()

    def poster():
        while time.monotonic() < stop:
            st = post(url, body)
            with lock:
                statuses[st] = statuses.get(st, 0) + 1

    threads = [threading.Thread(target=poster, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    lat, bad = [], 0
    while time.monotonic() < stop:
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=60) as r:
                r.read()
                bad += r.status != 200
        except (urllib.error.HTTPError, OSError):
            bad += 1
        lat.append((time.monotonic() - t0) * 1000)
        time.sleep(0.05)
    for t in threads:
        t.join(timeout=130)
    lat.sort()
    pick = lambda q: round(lat[min(len(lat) - 1, int(q * len(lat)))], 1) if lat else None
    print(json.dumps({"healthz": len(lat), "p50_ms": pick(0.5), "p99_ms": pick(0.99),
                      "max_ms": round(lat[-1], 1) if lat else None, "healthz_not_200": bad,
                      "posts": statuses}))


main()
