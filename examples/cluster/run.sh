#!/usr/bin/env bash
# Runs the cluster example on one machine: a three-node NATS JetStream
# cluster, two Hookgate instances sharing it (:8081 and :8082) and the demo
# backend on 127.0.0.1:9000. Ctrl-C stops everything; ./data keeps the state.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
mkdir -p bin
go build -o bin/hookgate ./cmd/hookgate
go build -o bin/demo-backend ./examples/demo-backend
go build -o bin/nats-server github.com/nats-io/nats-server/v2
cd "$here"
mkdir -p data
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true' EXIT
for i in 1 2 3; do
	../../bin/nats-server -c "nats-$i.conf" >"data/nats-$i.log" 2>&1 &
	pids+=($!)
done
../../bin/demo-backend &
pids+=($!)
# Demo secrets, as in examples/demo.env: routes.yaml holds only placeholders.
export GITHUB_WEBHOOK_SECRET="${GITHUB_WEBHOOK_SECRET:-demo-github-secret}"
# Each instance opens the store when it starts and creates the replicated
# streams, which needs the cluster to have elected a leader: an instance that
# fails to start is started again, for up to two minutes.
start_instance() {
	local i=$1 deadline=$((SECONDS + 120))
	while [ $SECONDS -lt $deadline ]; do
		../../bin/hookgate run --config "Caddyfile-$i" --adapter caddyfile >"data/hookgate-$i.log" 2>&1 &
		local pid=$!
		while kill -0 "$pid" 2>/dev/null; do
			if grep -q '"serving initial configuration"' "data/hookgate-$i.log"; then
				pids+=("$pid")
				return 0
			fi
			sleep 0.5
		done
		sleep 1
	done
	tail -3 "data/hookgate-$i.log" data/nats-*.log
	return 1
}
for i in 1 2; do
	start_instance "$i" || exit 1
done
cat <<'MSG'
Two gateways share one JetStream store. Send one event to both (same delivery id):
  for port in 8081 8082; do bin/hookgate send --provider github --secret demo-github-secret \
      --header 'X-GitHub-Delivery: demo-1' --url http://localhost:$port/webhooks/github; done
The demo backend prints each delivery once; logs are in examples/cluster/data/.
Inspect from either instance: HOOKGATE_ADMIN=http://localhost:2021 bin/hookgate events list
MSG
wait "${pids[@]}"
