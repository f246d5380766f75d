#!/usr/bin/env bash
# bench/bench-mail-out.sh - `make bench-mail-out` (part of `make
# bench-mail`): the outgoing half of locklab's mail on this machine,
# database and SMTP server (python3-aiosmtpd) on the same machine.
#
#   render: GET /api/v1/submissions/{id}/reply of a finished submission
#           with no outbox copy, so each request loads the submission and
#           its verdict rows and builds the mail with GMime; RENDERS
#           requests over one keep-alive connection; prints mails/s
#   send:   SENDS copies of a reply queued in the outbox at once, sent by
#           one server's sender thread over SMTP to aiosmtpd on loopback;
#           prints mails/s from the first claim to the last 'sent'
#
# Needs build/locklab-server, PostgreSQL 15, curl, python3, jq, python3-aiosmtpd.
set -uo pipefail
RENDERS=${RENDERS:-500}
SENDS=${SENDS:-300}
source "$(dirname "$0")/../tests/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"
source "$TOP/tests/lib/mail.sh"

printf 'machine: %s, %s CPUs, %s, kernel %s\n' "$(hostname)" "$(nproc)" \
  "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" "$(uname -r)"
pg_start || exit 1
MAILS=$T/mails
port=$(free_port)
sink_start "$MAILS" "$port" || exit 1
server_start --min-rounds 2 --max-rounds 4 --smtp-url "smtp://127.0.0.1:$port" --mail-poll-ms 50 \
  --mail-from 'locklab <robot@lab.example.org>' || exit 1
register_agent
make_series "$T/s" >/dev/null || exit 1
submit_mbox "$T/s/series.mbox"
sub=$SUB
finish "$sub" 1
wait_mails 1 || { echo "bench-mail-out: the first reply was not sent"; exit 1; }

# render
sql "DELETE FROM outbox WHERE submission_id = $sub"
for ((i = 0; i < RENDERS; i++)); do
  printf 'url = "%s/api/v1/submissions/%s/reply"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\nnext\n' "$URL" "$sub"
done | sed '$ d' >"$T/get.cfg"
start=$(date +%s.%N)
curl -sS -K "$T/get.cfg" >"$T/codes"
end=$(date +%s.%N)
good=$(grep -c '^200$' "$T/codes")
printf 'render: %d replies built in %.2f s = %.0f mails/s (%d not 200), %d verdict rows each\n' \
  "$good" "$(python3 -c "print($end - $start)")" "$(python3 -c "print($good / ($end - $start))")" \
  "$((RENDERS - good))" "$(sql "SELECT count(*) FROM verdicts v JOIN comparisons c ON c.id = v.comparison_id JOIN jobs j ON j.id = c.job_id WHERE j.submission_id = $sub")"

# send
curl -sS "$URL/api/v1/submissions/$sub/reply" >"$T/reply.eml"
bytes=$(wc -c <"$T/reply.eml")
sql "INSERT INTO outbox (submission_id, subject, message, message_id, state, next_attempt)
     SELECT $sub, 'bench', \$m\$$(cat "$T/reply.eml")\$m\$, '<bench.' || g || '@lab.example.org>', 'queued', now()
     FROM generate_series(1, $SENDS) g"
start=$(date +%s.%N)
for ((i = 0; i < 1200; i++)); do
  [[ $(sql "SELECT count(*) FROM outbox WHERE state = 'sent' AND message_id LIKE '<bench.%'") -ge $SENDS ]] && break
  sleep 0.05
done
span=$(sql "SELECT extract(epoch FROM max(sent) - min(sent)) FROM outbox WHERE message_id LIKE '<bench.%'")
sent=$(sql "SELECT count(*) FROM outbox WHERE state = 'sent' AND message_id LIKE '<bench.%'")
received=$(($(ls "$MAILS"/*.eml | wc -l) - 1))
printf 'send:   %d of %d mails (%d bytes each) sent in %.2f s = %.0f mails/s to aiosmtpd on loopback; the SMTP server received %d\n' \
  "$sent" "$SENDS" "$bytes" "$span" "$(python3 -c "print($sent / max($span, 1e-9))")" "$received"
