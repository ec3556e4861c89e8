#!/usr/bin/env bash
# The long versions of the reliability tests, in one command:
#   1. every fuzz target for FUZZ_TIME each (default 10m), with the
#      executions and findings of each;
#   2. the crash soak: kill -9 at random moments under load with reloads
#      every 2 s, for SOAK_MINUTES (default 10);
#   3. the edge fuzz: EDGE_FUZZ_N (default 200000) random unsigned requests
#      against the real binary (600 in the default test run);
#   4. the power-loss soak: POWERLOSS_CUTS (default 1000) power cuts of the
#      gateway's storage folder on powerfs under load (docs/durability.md);
#      needs root and /dev/fuse; then SWEEP_POWERCUTS (default 1000) cuts
#      of the store while retention sweeps delete events and body segments;
#   5. the JetStream cluster test and the hostile suite;
#   6. JetStream partitions: three NATS nodes in network namespaces, two
#      gateways under load, rounds of partitions (the stream leader, a
#      follower, flapping lossy links, the gateways cut off, every node
#      killed at once) for PARTITION_MINUTES (default 30; needs root);
#   7. the power of every JetStream node cut at once, their store_dirs on
#      powerfs: JETSTREAM_POWERCUTS (default 5) cuts with sync_interval
#      always, then the same measured with NATS's default and with names
#      kept only by a folder's fsync.
# Usage: scripts/long-tests.sh            (about 3½ h with the defaults)
#        FUZZ_TIME=2m SOAK_MINUTES=5 POWERLOSS_CUTS=200 PARTITION_MINUTES=10 scripts/long-tests.sh
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_TIME="${FUZZ_TIME:-10m}"
SOAK_MINUTES="${SOAK_MINUTES:-10}"
EDGE_FUZZ_N="${EDGE_FUZZ_N:-200000}"
POWERLOSS_CUTS="${POWERLOSS_CUTS:-1000}"
SWEEP_POWERCUTS="${SWEEP_POWERCUTS:-1000}"
PARTITION_MINUTES="${PARTITION_MINUTES:-30}"
JETSTREAM_POWERCUTS="${JETSTREAM_POWERCUTS:-5}"
out="$(mktemp -d)"
echo "logs in $out"

summary=()
for target in \
	"FuzzEveryPreset ./internal/verify" \
	"FuzzStripeHeader ./internal/verify" \
	"FuzzSignatureNeedsTheSecret ./internal/verify" \
	"FuzzParse ./internal/config" \
	"FuzzExtractKey ./internal/rules" \
	"FuzzCompile ./internal/rules" \
	"FuzzSchema ./internal/rules" \
	"FuzzDecodeRecords ./internal/store/bolt"; do
	set -- $target
	log="$out/$1.log"
	echo "== $1 for $FUZZ_TIME"
	# One worker: the figures do not depend on how busy the other core is.
	# Minimizing each new interesting input is capped, or the run stalls on it.
	if go test -run '^$' -fuzz "^$1\$" -fuzztime "$FUZZ_TIME" -fuzzminimizetime 5s -parallel 1 "$2" >"$log" 2>&1; then
		result="no failure"
	else
		result="FAILED (input saved under $2/testdata/fuzz/$1)"
	fi
	last="$(grep -E '^fuzz: elapsed' "$log" | tail -1)"
	summary+=("$1: $result; $last")
	echo "   $result; $last"
done

echo "== crash soak for $SOAK_MINUTES minutes"
HOOKGATE_SOAK_MINUTES="$SOAK_MINUTES" go test -count=1 -timeout 0 -run '^TestCrashLoop$' -v ./test/e2e/ 2>&1 | tee "$out/soak.log" | grep -E '^\s+load_test.go:[0-9]+: [0-9]+ crashes|^(--- |ok|FAIL)'

echo "== edge fuzz: $EDGE_FUZZ_N random unsigned requests against the real binary"
HOOKGATE_EDGE_FUZZ_N="$EDGE_FUZZ_N" go test -count=1 -timeout 0 -run '^TestEdgeFuzz$' -v ./test/e2e/ 2>&1 | tee "$out/edgefuzz.log" | grep -E '^\s+edgefuzz_test.go:[0-9]+: |^(--- |ok|FAIL)'

echo "== power-loss soak: $POWERLOSS_CUTS power cuts"
HOOKGATE_POWERLOSS_CUTS="$POWERLOSS_CUTS" go test -count=1 -timeout 0 -run '^TestPowerLoss$' -v ./test/e2e/ 2>&1 | tee "$out/powerloss.log" | grep -E '^\s+powerloss_test.go:[0-9]+: ([0-9]+ power cuts|cut [0-9]+[:(]|HOOKGATE_POWERLOSS_SEED)|^(--- |ok|FAIL)'

echo "== power cuts during retention sweeps: $SWEEP_POWERCUTS"
HOOKGATE_SWEEP_POWERCUTS="$SWEEP_POWERCUTS" go test -count=1 -timeout 0 -run '^TestPowerLossDuringSweep$' -v ./test/e2e/ 2>&1 | tee "$out/sweep-powerloss.log" | grep -E '^\s+sweep_powerloss_test.go:[0-9]+: ([0-9]+ power cuts|cut [0-9]+:|HOOKGATE_SWEEP_POWERCUTS_SEED)|^(--- |ok|FAIL)'

echo "== JetStream cluster, hostile requests, unwritable store, disk full"
go test -count=1 -run 'TestJetStreamClusterTwoInstances|TestHostileRequests|TestStoreUnwritable|TestDiskFull' -v ./test/e2e/ 2>&1 | tee "$out/e2e.log" | grep -E '^\s+\w+_test.go:[0-9]+: |^(--- |ok|FAIL)' | grep -v '^\s*{'

echo "== JetStream partitions for $PARTITION_MINUTES minutes (round logs: $out/partitions)"
# The figures are a table per round and one per sync_interval setting over all rounds.
HOOKGATE_PARTITION_MINUTES="$PARTITION_MINUTES" HOOKGATE_PARTITION_LOGS="$out/partitions" \
	go test -count=1 -timeout 0 -run '^TestJetStreamPartitions$' -v ./test/e2e/ 2>&1 | tee "$out/partitions.log" |
	grep -E '^\s+(partition_test|netns_test).go:[0-9]+: |^\s{10}\S|^\s*(--- |ok|FAIL)'

echo "== JetStream: every node's power cut at once, $JETSTREAM_POWERCUTS times per round"
HOOKGATE_JETSTREAM_POWERCUTS="$JETSTREAM_POWERCUTS" HOOKGATE_JETSTREAM_POWERCUTS_DEFAULT_SYNC=1 HOOKGATE_JETSTREAM_POWERCUTS_STRICT=1 \
	go test -count=1 -timeout 0 -run '^TestJetStreamPowerLoss$' -v ./test/e2e/ 2>&1 | tee "$out/jetstream-powerloss.log" |
	grep -E '^\s+(jetstream_powerloss_test|partition_test).go:[0-9]+: |^\s{10}\S|^\s*(--- |ok|FAIL)'

echo
echo "== fuzzing summary"
printf '%s\n' "${summary[@]}"
grep -q FAILED <<<"${summary[*]}" && exit 1 || true
