#!/usr/bin/env bash
# The outbox over TLS with a login: STARTTLS on smtp:// and TLS from the
# first byte on smtps://, against real SMTP servers (python3-aiosmtpd) on
# loopback with a certificate made here.  A certificate that does not
# verify, or a wrong password, sends nothing and keeps the mail queued with
# the reason.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"
source "$TOP/tests/lib/mail.sh"

pg_start || { echo "Bail out! no postgres"; exit 1; }
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
  -addext 'subjectAltName=IP:127.0.0.1' -keyout "$T/key.pem" -out "$T/cert.pem" >/dev/null 2>&1 \
  || { echo "Bail out! openssl cannot make a certificate"; exit 1; }
PW='s3cret pass'
MAILS=$T/mails
tls_port=$(free_port)
sink_start "$MAILS" "$tls_port" starttls "$T/cert.pem" "$T/key.pem" lab "$PW" \
  || { echo "Bail out! no SMTP server"; exit 1; }
common=(--min-rounds 2 --max-rounds 4 --mail-retry-seconds 1 --mail-poll-ms 100
  --mail-from 'locklab <robot@lab.example.org>')
server_start "${common[@]}" --smtp-url "smtp://127.0.0.1:$tls_port" --smtp-starttls \
  --smtp-user lab --smtp-password "$PW" --smtp-ca-file "$T/cert.pem" || { echo "Bail out! no server"; exit 1; }
register_agent
make_series "$T/s" || { echo "Bail out! git format-patch failed"; exit 1; }

submit_mbox "$T/s/series.mbox"
finish "$SUB" 1
wait_mails 1
ok $? "the reply goes out over STARTTLS with a login"
is "$(jq -r '[.tls, .login] | join(",")' "$MAILS/0001.json")" "true,lab" \
  "the server saw TLS and the login before the mail"
is "$(jq -c .defects <(mailinfo "$MAILS/0001.eml"))" '[]' "and reads the mail without a defect"
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null

# attempts_past N: wait up to 20 s for the waiting mail to be tried more
# than N times, the last attempt over
attempts_past() {
  local i
  for ((i = 0; i < 200; i++)); do
    [[ $(sql "SELECT attempts > $1 AND state <> 'sending' FROM outbox WHERE id = $o2") == t ]] && return 0
    sleep 0.1
  done
  return 1
}

# a certificate nobody vouches for
server_start "${common[@]}" --smtp-url "smtp://127.0.0.1:$tls_port" --smtp-starttls \
  --smtp-user lab --smtp-password "$PW" || { echo "Bail out! no server"; exit 1; }
submit_mbox "$T/s/series.mbox"
finish "$SUB" 1
o2=$(sql "SELECT id FROM outbox WHERE submission_id = $SUB")
attempts_past 0
is "$(sql "SELECT state FROM outbox WHERE id = $o2")" queued "a certificate that does not verify sends nothing"
like "$(sql "SELECT last_error FROM outbox WHERE id = $o2")" '[Cc]ertificate|SSL' "and says why"
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
n=$(sql "SELECT attempts FROM outbox WHERE id = $o2")

# a wrong password
server_start "${common[@]}" --smtp-url "smtp://127.0.0.1:$tls_port" --smtp-starttls \
  --smtp-user lab --smtp-password wrong --smtp-ca-file "$T/cert.pem" || { echo "Bail out! no server"; exit 1; }
attempts_past "$n"
is "$(sql "SELECT state FROM outbox WHERE id = $o2")" queued "a refused login sends nothing"
like "$(sql "SELECT last_error FROM outbox WHERE id = $o2")" '[Ll]ogin|[Aa]uth' "and says why"
is "$(ls "$MAILS"/*.eml | wc -l)" 1 "nothing arrived meanwhile"
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null

# smtps://: TLS from the first byte
sink_stop
sink_start "$MAILS" "$tls_port" smtps "$T/cert.pem" "$T/key.pem" lab "$PW" \
  || { echo "Bail out! no smtps server"; exit 1; }
server_start "${common[@]}" --smtp-url "smtps://127.0.0.1:$tls_port" \
  --smtp-user lab --smtp-password "$PW" --smtp-ca-file "$T/cert.pem" || { echo "Bail out! no server"; exit 1; }
wait_mails 2
ok $? "the waiting mail goes out over smtps://"
is "$(sql "SELECT state FROM outbox WHERE id = $o2")" sent "and is marked sent"
is "$(jq -r '[.tls, .login] | join(",")' "$MAILS/0002.json")" "true,lab" "over TLS, logged in"

done_testing
