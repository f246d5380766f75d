#!/usr/bin/env bash
# --trusted-proxy: on connections from that address the client is the last
# X-Forwarded-For entry, so the per-address limit counts each client behind
# the proxy apart; from any other address the header is ignored.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

pg_start || bail_out "no postgres"
server_start --trusted-proxy 127.0.0.1 --per-ip-connections 2 || bail_out "no server"
PORT=${URL##*:}

# hold SOURCE XFF...: one kept-alive connection per XFF from SOURCE, each
# after one GET /healthz, then one more GET /healthz per XFF from SOURCE on a
# fresh connection; prints the status of each of those, one a line
hold() {
  python3 - "$PORT" "$@" <<'PY'
import socket, sys
port, src, xffs = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(",")
def ask(xff, keep):
    s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(src, 0))
    s.sendall(("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.9, %s\r\n%s\r\n"
               % (xff, "" if keep else "Connection: close\r\n")).encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return s, data.split(b" ")[1].decode() if data.startswith(b"HTTP/") else "closed"
held = [ask(x, True)[0] for x in xffs]
for x in sys.argv[4].split(","):
    s, st = ask(x, False)
    print(st)
    s.close()
for s in held:
    s.close()
PY
}

mapfile -t r < <(hold 127.0.0.1 192.0.2.1,192.0.2.1 192.0.2.1,192.0.2.2)
is "${r[0]:-}" 503 "through the proxy: a third connection of client 192.0.2.1 is over --per-ip-connections 2"
is "${r[1]:-}" 200 "another client behind the same proxy is served"
mapfile -t r < <(hold 127.0.0.5 192.0.2.3,192.0.2.4 192.0.2.5)
is "${r[0]:-}" 503 "from an address that is not the proxy, X-Forwarded-For is ignored: its third connection is over"
done_testing
