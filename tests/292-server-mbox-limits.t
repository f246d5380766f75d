#!/usr/bin/env bash
# What one submission may make the server parse is bounded: messages per
# mbox, patches per series, bytes per patch.  Past each, 413 naming the
# limit and its option, and nothing is stored; within them, 202.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

pg_start || { echo "Bail out! no postgres"; exit 1; }
server_start --max-series-patches 3 --max-patch-bytes 4000 || { echo "Bail out! no server"; exit 1; }

# series N BYTES: a threaded N-part series, each diff about BYTES long, as a JSON body
series() {
  python3 - "$1" "$2" <<'PY'
import json, sys
n, size = int(sys.argv[1]), int(sys.argv[2])
mails = []
for i in range(1, n + 1):
    line = "+" + "x" * 60 + "\n"
    body = line * max(1, size // len(line))
    mails.append(
        "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
        "From: Dev <dev@example.org>\n"
        "Date: Mon, 1 Jan 2024 00:00:00 +0000\n"
        "Message-Id: <p%d@example.org>\n%s"
        "Subject: [PATCH %d/%d] locking: part %d\n\n"
        "part %d\n---\n"
        "diff --git a/f%d b/f%d\nnew file mode 100644\n--- /dev/null\n+++ b/f%d\n"
        "@@ -0,0 +1,%d @@\n%s\n"
        % (i, "" if i == 1 else "In-Reply-To: <p1@example.org>\nReferences: <p1@example.org>\n",
           i, n, i, i, i, i, i, body.count("\n"), body))
print(json.dumps({"mbox": "".join(mails)}))
PY
}
count() { sql "SELECT count(*) FROM submissions"; }
# submit_series N BYTES: submit such a series; sets CODE and BODY
submit_series() {
  series "$1" "$2" >"$T/series.json"
  api POST /api/v1/submissions -H 'Content-Type: application/json' --data-binary @"$T/series.json"
}

submit_series 20000 10
is "$CODE" 413 "a 20,000-part series: 413"
like "$BODY" 'more than 5000 messages.*--max-mbox-messages' "it names the message limit and its option"
is "$(count)" 0 "nothing is stored"

submit_series 4 100
is "$CODE" 413 "a 4-part series past --max-series-patches 3: 413"
like "$BODY" 'the series has 4 patches, more than 3.*--max-series-patches' "it names the patch limit"
is "$(count)" 0 "nothing is stored"

submit_series 1 8000
is "$CODE" 413 "a patch past --max-patch-bytes 4000: 413"
like "$BODY" 'patch 1 is [0-9]+ bytes, more than 4000.*--max-patch-bytes' "it names the size limit"
is "$(count)" 0 "nothing is stored"

submit_series 3 1000
is "$CODE" 202 "a 3-part series within the limits: 202"
is "$(jq -r .patches <<<"$BODY")" 3 "with its 3 patches"
is "$(count)" 1 "and it is stored"
done_testing
