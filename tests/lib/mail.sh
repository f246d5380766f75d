# tests/lib/mail.sh - mail tests' helpers; source after tap.sh, pg.sh and
# server.sh.
#   sink_start DIR PORT [...] / sink_stop   a real SMTP server on loopback
#   wait_mails N      wait for N messages in $MAILS;  wait_state ID STATE  an outbox row's
#   mailinfo FILE|-   what Python's email package reads in a mail (JSON)
#   finish SUB SCALE  run the submission's job to its end as an agent would
SINKPY=/usr/bin/python3 # Debian's python, where python3-aiosmtpd lives
if ! "$SINKPY" -c 'import aiosmtpd' 2>/dev/null; then
  echo "Bail out! python3-aiosmtpd is missing (scripts/deps.sh installs it)"
  exit 1
fi
mailinfo() { python3 "$TOP/tests/lib/mailinfo.py" "$@"; }

# sink_start DIR PORT [MODE CERT KEY USER PASSWORD]: the SMTP server
# (tests/lib/smtp_sink.py), until sink_stop
sink_start() {
  local i
  rm -f "$1/ready"
  "$SINKPY" "$TOP/tests/lib/smtp_sink.py" "$@" >>"$T/sink.log" 2>&1 &
  SINK_PID=$!
  at_exit "kill $SINK_PID 2>/dev/null; wait $SINK_PID 2>/dev/null"
  for ((i = 0; i < 100; i++)); do
    [[ -e $1/ready ]] && return 0
    sleep 0.1
  done
  diag "the SMTP server did not start:" "$(tail -n 20 "$T/sink.log")"
  return 1
}
sink_stop() { kill "$SINK_PID"; wait "$SINK_PID" 2>/dev/null; }
# wait_mails N: wait up to 20 s for N messages in the sink
wait_mails() {
  local i
  for ((i = 0; i < 200; i++)); do
    (($(ls "$MAILS"/*.eml 2>/dev/null | wc -l) >= $1)) && return 0
    sleep 0.1
  done
  return 1
}
# wait_state ID STATE: wait up to 20 s for outbox row ID to reach STATE
wait_state() {
  local i
  for ((i = 0; i < 200; i++)); do
    [[ $(sql "SELECT state FROM outbox WHERE id = $1") == "$2" ]] && return 0
    sleep 0.1
  done
  return 1
}
# finish SUB SCALE: one agent runs the submission's job to the end, the
# patched side at SCALE times the base (1: no change, 0.9: 10% slower)
finish() {
  local r
  claim "$AGENT_TOKEN"
  for r in 0 1 2 3 4 5 6 7; do
    post_round "$JOB" "$AGENT_TOKEN" base $r 1
    post_round "$JOB" "$AGENT_TOKEN" patched $r "$2"
    [[ $(jq -r .state <<<"$BODY") == done ]] && break
  done
}

