# tests/lib/intake.sh - mail for the intake's tests; source after tap.sh.
#   maildir_deliver DIR FILE...  deliver each FILE into Maildir DIR as an MDA
#                                does (tmp/, then a rename into new/)
#   dovecot_start [tls]          start Debian's dovecot as an unprivileged
#                                instance on a free loopback port (plain IMAP,
#                                login any user with password "secret"); sets
#                                IMAP_URL (imap://127.0.0.1:PORT/INBOX);
#                                stopped when the test ends; 1 when missing.
#                                With tls: a certificate for 127.0.0.1 made
#                                here (DOVECOT_CA, its PEM), STARTTLS on
#                                IMAP_URL's port and imaps:// on another
#                                (IMAPS_BASE, imaps://127.0.0.1:PORT/)
#   imap_append FILE...          APPEND each FILE to IMAP_URL, or to IMAP_TO
#                                when set (curl)
#   imap_create MAILBOX...       create each mailbox
#   wait_for SQL WANT            poll the database (at most 60 s) until SQL
#                                gives WANT; prints the last value
#   metric NAME                  the value of NAME in the server's /metrics
#   maildir_server_start         a Maildir $T/Maildir and a server reading it
#                                (poll 0.2 s, wait_seconds 30; tests/lib/
#                                server.sh's server_start)
#   locking_repo DIR             a git repository in DIR (made) of three
#                                commits to m.c: start, "locking: add
#                                handoff", "locking: add pickup"; cd's into it
_mail_n=0

maildir_deliver() {
  local dir=$1 f name
  shift
  mkdir -p "$dir/tmp" "$dir/new" "$dir/cur"
  for f in "$@"; do
    _mail_n=$((_mail_n + 1))
    name="$(date +%s).M${_mail_n}P$$.locklab-test"
    cp "$f" "$dir/tmp/$name" && mv "$dir/tmp/$name" "$dir/new/$name" || return 1
  done
}

dovecot_start() {
  local d=$T/dovecot port user group run=() i ssl="ssl = no" imaps_port=0
  [[ -x /usr/sbin/dovecot ]] || return 1
  port=$(free_port)
  mkdir -p "$d"
  if [[ ${1:-} == tls ]]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
      -addext 'subjectAltName=IP:127.0.0.1' -keyout "$d/key.pem" -out "$d/cert.pem" >/dev/null 2>&1 ||
      { diag "openssl cannot make a certificate"; return 1; }
    imaps_port=$(free_port)
    ssl="ssl = yes
ssl_cert = <$d/cert.pem
ssl_key = <$d/key.pem"
    DOVECOT_CA=$d/cert.pem
    IMAPS_BASE="imaps://127.0.0.1:$imaps_port/"
  fi
  # as root, the whole instance runs as nobody; else as the user running the test
  if [[ $(id -u) -eq 0 ]]; then
    user=nobody group=nogroup run=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  else
    user=$(id -un) group=$(id -gn)
  fi
  mkdir -p "$d/run" "$d/state" "$d/home" "$d/mail/new" "$d/mail/cur" "$d/mail/tmp"
  cat >"$d/dovecot.conf" <<EOF
base_dir = $d/run
state_dir = $d/state
log_path = $d/dovecot.log
protocols = imap
listen = 127.0.0.1
$ssl
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = $user
default_internal_group = $group
default_login_user = $user
mail_location = maildir:$d/mail
passdb {
  driver = static
  args = password=secret
}
userdb {
  driver = static
  args = uid=$user gid=$group home=$d/home
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = $port
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = $imaps_port
  }
}
service anvil {
  chroot =
}
EOF
  chown -R "$user:$group" "$d"
  # stdio to /dev/null: the daemon must not hold prove's pipe open
  "${run[@]}" /usr/sbin/dovecot -c "$d/dovecot.conf" </dev/null >/dev/null 2>&1 ||
    { diag "dovecot did not start: $(tail -5 "$d/dovecot.log" 2>/dev/null)"; return 1; }
  for ((i = 0; i < 50; i++)); do [[ -s $d/run/master.pid ]] && break; sleep 0.1; done
  DOVECOT_PID=$(cat "$d/run/master.pid" 2>/dev/null) || { diag "dovecot wrote no pid file"; return 1; }
  at_exit "kill $DOVECOT_PID"
  IMAP_URL="imap://127.0.0.1:$port/INBOX"
  for ((i = 0; i < 50; i++)); do
    curl -sS --user t:secret -X 'NOOP' "imap://127.0.0.1:$port/" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  diag "dovecot does not answer: $(tail -5 "$d/dovecot.log")"
  return 1
}

imap_append() {
  local f
  for f in "$@"; do
    curl -sS --user t:secret -T "$f" "${IMAP_TO:-$IMAP_URL}" || return 1
  done
}

# imap_create MAILBOX...: create each mailbox (plain IMAP)
imap_create() {
  local b
  for b in "$@"; do
    curl -sS --user t:secret -X "CREATE $b" "${IMAP_URL%/*}/" >/dev/null || return 1
  done
}

wait_for() {
  local i v
  for ((i = 0; i < 300; i++)); do
    v=$(sql "$1")
    [[ $v == "$2" ]] && break
    sleep 0.2
  done
  printf '%s' "$v"
}
metric() { curl -sS "$URL/metrics" | awk -v k="$1" '$1 == k {print $2}'; }

locking_repo() {
  git init -q "$1" && cd "$1" && git config user.email dev@example.org &&
    git config user.name 'Dev Eloper' && printf 'int owner;\n' >m.c && git add m.c && git commit -qm start &&
    printf 'int handoff;\n' >>m.c && git commit -qam 'locking: add handoff' -m 'Hand off.' &&
    printf 'int pickup;\n' >>m.c && git commit -qam 'locking: add pickup' -m 'Pick up.'
}

maildir_server_start() {
  mkdir -p "$T/Maildir/new" "$T/Maildir/cur" "$T/Maildir/tmp"
  printf '{"sources": [{"name": "lists", "maildir": "%s"}], "poll_seconds": 0.2, "wait_seconds": 30}\n' \
    "$T/Maildir" >"$T/mail.json"
  server_start --mail-config "$T/mail.json"
}
