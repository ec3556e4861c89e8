#!/usr/bin/env bash
# Runs the example: builds hookgate, starts the demo backend on 127.0.0.1:9000
# and the gateway on :8080 with examples/Caddyfile. Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
go build -o bin/hookgate ./cmd/hookgate
go build -o bin/demo-backend ./examples/demo-backend
bin/demo-backend &
backend=$!
trap 'kill "$backend" 2>/dev/null || true' EXIT
echo "Send a signed test event from another terminal:"
echo "  bin/hookgate send --provider github --secret demo-github-secret --url http://localhost:8080/webhooks/github"
bin/hookgate run --config examples/Caddyfile
