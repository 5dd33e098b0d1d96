#!/bin/sh
# `make preview`: serves the previewer and bridges it to a server.
#
#   web/preview.sh BUILD SERVER_PORT WEB_PORT [WEB_HOST]
#
# When nothing listens on 127.0.0.1:SERVER_PORT, starts BUILD/animserver there
# (the embedded default database). Then runs websockify (Debian's), which
# serves BUILD/web over HTTP and bridges WebSocket connections on the same
# port to the server's TCP port, byte for byte (the page speaks the ordinary
# protocol, hello and auth token included). Prints the URL; Ctrl-C stops what
# it started. WEB_HOST defaults to 127.0.0.1: the bridge has no access control
# of its own beyond the server's auth token.
set -eu
build=$1
server_port=$2
web_port=$3
web_host=${4:-127.0.0.1}
listening() {
  /usr/bin/python3 -c "import socket,sys; s=socket.socket(); s.settimeout(0.5); sys.exit(s.connect_ex(('127.0.0.1', $1)))"
}
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT INT TERM
if listening "$server_port"; then
  echo "preview: using the server already on 127.0.0.1:$server_port"
else
  "$build/animserver" --port "$server_port" &
  pids="$pids $!"
  for _ in 1 2 3 4 5 6 7 8 9 10; do listening "$server_port" && break; sleep 0.2; done
  echo "preview: started $build/animserver on 127.0.0.1:$server_port (embedded default database)"
fi
websockify=$(command -v websockify || echo /usr/bin/websockify)
"$websockify" --web "$build/web" "$web_host:$web_port" "127.0.0.1:$server_port" >"$build/websockify.log" 2>&1 &
pids="$pids $!"
for _ in 1 2 3 4 5 6 7 8 9 10; do listening "$web_port" && break; sleep 0.2; done
echo
echo "  previewer: http://$web_host:$web_port/   (bridge log: $build/websockify.log; Ctrl-C stops)"
echo "  with an auth token: http://$web_host:$web_port/?token=TOKEN"
echo
wait
