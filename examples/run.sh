#!/usr/bin/env bash
# Runs the example: builds hookgate, starts the demo backend on 127.0.0.1:9000
# and the gateway on :8080 with examples/Caddyfile, its admin endpoint on
# localhost:2019 (HOOKGATE_ADMIN=localhost:PORT picks another). The secrets
# come from the environment, as in production: demo values from
# examples/demo.env, unless they are already set. Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."

. examples/demo.env
# The Caddyfile's admin address, and the hookgate commands' default, when set.
admin="${HOOKGATE_ADMIN:-localhost:2019}"
export HOOKGATE_ADMIN="${admin#*://}"

# Say which port is taken before Caddy fails to bind it.
busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if busy "${HOOKGATE_ADMIN##*:}"; then
	echo "$HOOKGATE_ADMIN, the example's admin endpoint, is in use (another Caddy?). Pick a free port" >&2
	echo "for the gateway and for the hookgate commands alike, in both terminals:" >&2
	echo "  export HOOKGATE_ADMIN=localhost:2029" >&2
	exit 1
fi
for port in 8080 9000; do
	if busy "$port"; then
		echo "port $port is in use: the example's gateway listens on :8080 and its demo backend on 127.0.0.1:9000" >&2
		exit 1
	fi
done

mkdir -p bin
go build -o bin/hookgate ./cmd/hookgate
go build -o bin/demo-backend ./examples/demo-backend
bin/demo-backend &
backend=$!
trap 'kill "$backend" 2>/dev/null || true' EXIT
cat <<MSG
Send signed test events from another terminal, with the same demo secrets:
  . examples/demo.env
  bin/hookgate send --routes examples/routes.yaml --source github
  bin/hookgate send --routes examples/routes.yaml --source stripe
MSG
if [ "$HOOKGATE_ADMIN" != localhost:2019 ]; then
	echo "and, for bin/hookgate events list and the other admin commands: export HOOKGATE_ADMIN=$HOOKGATE_ADMIN"
fi
bin/hookgate run --config examples/Caddyfile
