// Command bench measures Hookgate against Caddy's own ceiling, in one run on
// one machine: the same binary answering `respond 200` is the baseline for
// ingest, and Caddy's reverse_proxy forwarding the same requests is the
// baseline for delivery. It prints a table with each figure's ratio to its
// baseline and writes it as JSON under bench/results/.
//
//	go run ./bench                 # the full run (about ten minutes)
//	go run ./bench -ack [-compare /path/to/hookgate]   # the ACK figures alone (about three minutes): wrk and a fixed-rate client
//	go run ./bench -ack-profile cpu.pprof              # a CPU profile of the gateway under those events
//	go run ./bench -smoke          # seconds, for CI: same scenarios, tiny sizes
//	go run ./bench -profile cpu.pprof [-deliver] [-compare /path/to/hookgate]   # a CPU profile of ingest at saturation
//	go run ./bench -compare /path/to/hookgate     # this checkout against another build, alternating
//	go run ./bench -footprint 200000 [-compare /path/to/hookgate]   # memory and disk with that many pending
//
// The JetStream rows run NATS servers inside this process, on the same cores.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"text/tabwriter"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/hookgate/hookgate/internal/natstest"
)

// Row is one figure of the report.
type Row struct {
	Scenario string  `json:"scenario"`
	Metric   string  `json:"metric"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	// Baseline is what the ratio compares with; empty when there is none.
	Baseline string  `json:"baseline,omitempty"`
	Ratio    float64 `json:"ratio,omitempty"`
}

// Config sizes a run.
type Config struct {
	Duration   time.Duration // per load step
	Rates      []int         // fixed rates for latency (vegeta)
	AckRates   []int         // fixed rates for the ACK's latency (the light client)
	Workers    uint64        // saturation concurrency
	Backlog    int           // events drained in the delivery scenario
	ScaleSmall int           // stored events in the first scale step
	ScaleLarge int           // stored events in the second scale step
}

var (
	full  = Config{Duration: 10 * time.Second, Rates: []int{500, 2000, 5000}, AckRates: []int{2000, 5000}, Workers: 64, Backlog: 100_000, ScaleSmall: 10_000, ScaleLarge: 1_000_000}
	smoke = Config{Duration: time.Second, Rates: []int{200}, AckRates: []int{200}, Workers: 16, Backlog: 500, ScaleSmall: 200, ScaleLarge: 1000}
)

func main() {
	smokeRun := flag.Bool("smoke", false, "a run of seconds, for CI")
	out := flag.String("out", "bench/results", "folder for the JSON report")
	profile := flag.String("profile", "", "write a CPU profile of ingest at saturation to this file, and nothing else")
	deliver := flag.Bool("deliver", false, "with -profile: deliver each event to a local upstream meanwhile (with -compare: profile that binary instead)")
	compare := flag.String("compare", "", "measure this checkout against another hookgate binary, alternating rounds")
	rounds := flag.Int("rounds", 3, "with -compare: rounds per binary")
	ackProfile := flag.String("ack-profile", "", "write a CPU profile of the gateway under wrk's GitHub events to this file, and nothing else")
	ackOnly := flag.Bool("ack", false, "measure the ACK figures alone (throughput with wrk, latency at fixed rates, fdatasyncs per event), and save them")
	footprint := flag.Int("footprint", 0, "fill a gateway with this many events and report its memory and store size (with -compare: for both builds), and nothing else")
	flag.Parse()
	cfg := full
	if *smokeRun {
		cfg = smoke
	}
	switch {
	case *ackProfile != "":
		if err := AckProfile(cfg, *compare, *ackProfile); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	case *profile != "":
		if err := Profile(cfg, *profile, *deliver, *compare); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	case *footprint > 0:
		rows, err := Footprint(cfg, *compare, *footprint)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		Print(os.Stdout, rows)
		return
	case *ackOnly && *compare != "":
		// The ACK figures of another build, for a side-by-side run.
		rows, err := RunAck(cfg, *compare)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		Print(os.Stdout, rows)
		return
	case *compare != "":
		rows, err := Compare(cfg, *compare, *rounds)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		Print(os.Stdout, rows)
		return
	}
	run := Run
	if *ackOnly {
		run = RunAck
	}
	rows, err := run(cfg, "")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	Print(os.Stdout, rows)
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	name := "full"
	if *smokeRun {
		name = "smoke"
	} else if *ackOnly {
		name = "ack"
	}
	path := filepath.Join(*out, fmt.Sprintf("%s-%s.json", time.Now().UTC().Format("20060102T150405Z"), name))
	report := map[string]any{"date": time.Now().UTC(), "go": runtime.Version(), "cpus": runtime.NumCPU(), "config": cfg, "rows": rows}
	data, _ := json.MarshalIndent(report, "", "  ")
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Println("written:", path)
}

// Print writes the table.
func Print(w *os.File, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tmetric\tvalue\tunit\tratio\tbaseline\t")
	for _, r := range rows {
		ratio := ""
		if r.Baseline != "" {
			ratio = fmt.Sprintf("%.2f", r.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t%s\t%s\t\n", r.Scenario, r.Metric, r.Value, r.Unit, ratio, r.Baseline)
	}
	tw.Flush()
}

func buildBinary(dir string) (string, error) {
	bin := filepath.Join(dir, "hookgate")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/hookgate")
	cmd.Dir = repoRoot()
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return bin, cmd.Run()
}

// repoRoot is the checkout the gateway is built from: the folder holding
// cmd/hookgate (bench is a module of its own inside it).
func repoRoot() string {
	dir, _ := os.Getwd()
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "cmd", "hookgate")); err == nil {
			return d
		}
	}
	return dir
}

// routes are the routes.yaml used: paused holds deliveries back (one
// attempt an hour) so that only ingest is measured, or a backlog builds up.
func routes(upstreamAddr string, paused bool) string {
	limit := ""
	if paused {
		limit = "    rate: 1/h\n    burst: 1\n"
	}
	return fmt.Sprintf(`max_body: 64KiB
upstreams:
  sink:
    url: http://%s
    concurrency: 64
%s    retry: {max_attempts: 3, initial_interval: 1h, max_interval: 1h}
sources:
  stripe:
    path: /webhooks/stripe
    provider: stripe
    secrets: [%s]
    default: [sink]
`, upstreamAddr, limit, stripeSecret)
}

const gatewaySite = "\troute {\n\t\twebhook_gateway ./routes.yaml\n\t\trespond 404\n\t}"

// Run executes every scenario. binary, when empty, is built first.
func Run(cfg Config, binary string) ([]Row, error) {
	work, err := os.MkdirTemp("", "hookgate-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	if binary == "" {
		if binary, err = buildBinary(work); err != nil {
			return nil, fmt.Errorf("building: %w", err)
		}
	}
	var rows []Row
	add := func(r Row) { rows = append(rows, r) }
	sub := func(name string) string {
		d := filepath.Join(work, name)
		os.MkdirAll(d, 0o755)
		return d
	}
	var seq atomic.Int64

	// The ACK figures, measured with light clients.
	ack, err := AckFigures(cfg, binary, work)
	if err != nil {
		return nil, err
	}
	rows = append(rows, ack...)

	// The same with vegeta, in this process: its own cost bounds the
	// baseline (it measures the client), so these rows are kept only as
	// the reference of the JetStream and scale ratios below.
	// Baseline: the same binary answering respond 200.
	base, err := startGateway(binary, sub("baseline"), "\trespond 200", "")
	if err != nil {
		return nil, err
	}
	m := attack(plainTargeter(base.url("/webhooks/stripe"), &seq), 0, cfg.Duration, cfg.Workers)
	baseRPS := m.Throughput
	add(Row{Scenario: "baseline respond 200, vegeta", Metric: "saturation", Value: baseRPS, Unit: "req/s"})
	baseP99 := map[int]float64{}
	for _, rate := range cfg.Rates {
		m := attack(plainTargeter(base.url("/webhooks/stripe"), &seq), rate, cfg.Duration, cfg.Workers)
		baseP99[rate] = ms(m.Latencies.P99)
		add(Row{Scenario: "baseline respond 200, vegeta", Metric: fmt.Sprintf("p99 @ %d/s", rate), Value: baseP99[rate], Unit: "ms"})
	}
	base.stop()

	// Ingest: signed events, unique ids, deliveries held back.
	sink := "127.0.0.1:1"
	ing, err := startGateway(binary, sub("ingest"), gatewaySite, routes(sink, true))
	if err != nil {
		return nil, err
	}
	target := ing.url("/webhooks/stripe")
	m = attack(stripeTargeter(target, "evt_sat_", &seq, 0), 0, cfg.Duration, cfg.Workers)
	if err := acceptedAll(m); err != nil {
		return nil, fmt.Errorf("ingest saturation: %w", err)
	}
	add(Row{Scenario: "ingest, vegeta", Metric: "saturation", Value: m.Throughput, Unit: "req/s", Baseline: "respond 200 saturation, vegeta", Ratio: m.Throughput / baseRPS})
	for _, rate := range cfg.Rates {
		m := attack(stripeTargeter(target, "evt_rate_", &seq, 0), rate, cfg.Duration, cfg.Workers)
		if err := acceptedAll(m); err != nil {
			return nil, fmt.Errorf("ingest at %d/s: %w", rate, err)
		}
		add(Row{Scenario: "ingest, vegeta", Metric: fmt.Sprintf("p50 @ %d/s", rate), Value: ms(m.Latencies.P50), Unit: "ms"})
		add(Row{Scenario: "ingest, vegeta", Metric: fmt.Sprintf("p99 @ %d/s", rate), Value: ms(m.Latencies.P99), Unit: "ms", Baseline: fmt.Sprintf("respond 200 p99 @ %d/s, vegeta", rate), Ratio: ms(m.Latencies.P99) / baseP99[rate]})
		add(Row{Scenario: "ingest, vegeta", Metric: fmt.Sprintf("p99.9 @ %d/s", rate), Value: ms(m.Latencies.Quantile(0.999)), Unit: "ms"})
	}
	// Dedup-heavy: every second request retries the previous event.
	m = attack(stripeTargeter(target, "evt_dup_", &seq, 2), 0, cfg.Duration, cfg.Workers)
	if err := acceptedAll(m); err != nil {
		return nil, fmt.Errorf("dedup-heavy: %w", err)
	}
	add(Row{Scenario: "ingest, 50% duplicates, vegeta", Metric: "saturation", Value: m.Throughput, Unit: "req/s", Baseline: "respond 200 saturation, vegeta", Ratio: m.Throughput / baseRPS})
	ing.stop()
	midRate := cfg.Rates[len(cfg.Rates)/2]
	boltRPS, boltP99 := value(rows, "ingest, vegeta", "saturation"), value(rows, "ingest, vegeta", fmt.Sprintf("p99 @ %d/s", midRate))

	// The same ingest on JetStream: one node, then three with replicas: 3
	// (an ACK waits for two of them), with NATS's default flush every two
	// minutes and with sync_interval: always (every write flushed before its
	// ACK, as bbolt does). The servers run in this process.
	for _, js := range []struct {
		nodes int
		sync  bool
	}{{1, false}, {3, false}, {3, true}} {
		nodes := js.nodes
		start, syncLabel, dir := natstest.Start, "", fmt.Sprintf("nats%d", nodes)
		if js.sync {
			start, syncLabel, dir = natstest.StartSyncAlways, ", sync_interval always", dir+"-sync"
		}
		cluster, err := start(nodes, sub(dir))
		if err != nil {
			return nil, err
		}
		storage := fmt.Sprintf("storage:\n  jetstream:\n    url: %s\n    replicas: %d\n", cluster.URLs(), nodes)
		gw, err := startGateway(binary, sub("jetstream-"+dir), gatewaySite, storage+routes(sink, true))
		if err != nil {
			cluster.Stop()
			return nil, err
		}
		label := fmt.Sprintf("ingest, JetStream %d node(s), R%d%s", nodes, nodes, syncLabel)
		target := gw.url("/webhooks/stripe")
		// JetStream may refuse a write (503, never a 2xx) while its servers,
		// sharing these cores, hold an election: counted, not fatal.
		m := attack(stripeTargeter(target, fmt.Sprintf("evt_js%s_", dir), &seq, 0), 0, cfg.Duration, cfg.Workers)
		if err := answeredOnly200or503(m); err != nil {
			gw.stop()
			cluster.Stop()
			return nil, fmt.Errorf("%s saturation: %w", label, err)
		}
		accepted := m.Throughput * m.Success
		add(Row{Scenario: label, Metric: "saturation (200s)", Value: accepted, Unit: "req/s", Baseline: "bbolt ingest saturation, vegeta", Ratio: accepted / boltRPS})
		add(Row{Scenario: label, Metric: "refused 503 at saturation", Value: 100 * (1 - m.Success), Unit: "%"})
		m = attack(stripeTargeter(target, fmt.Sprintf("evt_jsr%s_", dir), &seq, 0), midRate, cfg.Duration, cfg.Workers)
		gw.stop()
		cluster.Stop()
		if err := answeredOnly200or503(m); err != nil {
			return nil, fmt.Errorf("%s at %d/s: %w", label, midRate, err)
		}
		add(Row{Scenario: label, Metric: fmt.Sprintf("p99 @ %d/s", midRate), Value: ms(m.Latencies.P99), Unit: "ms", Baseline: fmt.Sprintf("bbolt ingest p99 @ %d/s, vegeta", midRate), Ratio: ms(m.Latencies.P99) / boltP99})
		add(Row{Scenario: label, Metric: fmt.Sprintf("refused 503 @ %d/s", midRate), Value: 100 * (1 - m.Success), Unit: "%"})
	}

	// Delivery: drain a backlog to an upstream that answers 200 at once,
	// against reverse_proxy forwarding the same number of requests.
	up, err := startUpstream("")
	if err != nil {
		return nil, err
	}
	drain, err := startGateway(binary, sub("drain"), gatewaySite, routes(up.addr, true))
	if err != nil {
		return nil, err
	}
	if err := fill(drain.url("/webhooks/stripe"), "evt_drain_", cfg.Backlog, cfg.Workers); err != nil {
		return nil, err
	}
	before := up.count.Load() // at most one attempt slipped through the pause
	start := time.Now()
	if err := drain.reload(routes(up.addr, false)); err != nil {
		return nil, err
	}
	if err := waitCount(up, before+int64(cfg.Backlog)-1, 10*time.Minute); err != nil {
		return nil, fmt.Errorf("drain: %w", err)
	}
	drainRate := float64(cfg.Backlog-1) / time.Since(start).Seconds()
	drain.stop()
	proxyUp, _ := startUpstream("")
	proxy, err := startGateway(binary, sub("proxy"), "\treverse_proxy "+proxyUp.addr, "")
	if err != nil {
		return nil, err
	}
	start = time.Now()
	if err := fill(proxy.url("/webhooks/stripe"), "evt_proxy_", cfg.Backlog, cfg.Workers); err != nil {
		return nil, err
	}
	proxyRate := float64(cfg.Backlog) / time.Since(start).Seconds()
	proxy.stop()
	add(Row{Scenario: "reverse_proxy, same requests", Metric: "forwarded", Value: proxyRate, Unit: "req/s"})

	// Ingest and delivery together: signed events at saturation while the
	// same process delivers each to a local upstream. Steady state is the
	// lower of the two rates over the window: a backlog that only grows is
	// not a rate the gateway sustains.
	both, err := startGateway(binary, sub("both"), gatewaySite, routes(up.addr, false))
	if err != nil {
		return nil, err
	}
	deliveredBefore, bothStart := up.count.Load(), time.Now()
	m = attack(stripeTargeter(both.url("/webhooks/stripe"), "evt_both_", &seq, 0), 0, cfg.Duration, cfg.Workers)
	deliveredRate := float64(up.count.Load()-deliveredBefore) / time.Since(bothStart).Seconds()
	both.stop()
	if err := acceptedAll(m); err != nil {
		return nil, fmt.Errorf("ingest and delivery: %w", err)
	}
	steady := min(m.Throughput, deliveredRate)
	add(Row{Scenario: "ingest + delivery, vegeta", Metric: "ingested", Value: m.Throughput, Unit: "req/s"})
	add(Row{Scenario: "ingest + delivery, vegeta", Metric: "delivered", Value: deliveredRate, Unit: "events/s"})
	add(Row{Scenario: "ingest + delivery, vegeta", Metric: "steady state", Value: steady, Unit: "events/s", Baseline: "respond 200 saturation, vegeta", Ratio: steady / baseRPS})
	add(Row{Scenario: fmt.Sprintf("delivery drain of %d", cfg.Backlog), Metric: "delivered", Value: drainRate, Unit: "events/s", Baseline: "reverse_proxy forwarded", Ratio: drainRate / proxyRate})

	// Scale: ingest with a small and a large store, deliveries pending.
	scaleDir := sub("scale")
	scale, err := startGateway(binary, scaleDir, gatewaySite, routes(up.addr, true))
	if err != nil {
		return nil, err
	}
	scaleTarget := scale.url("/webhooks/stripe")
	stored := 0
	var smallRate, smallP99 float64
	for _, size := range []int{cfg.ScaleSmall, cfg.ScaleLarge} {
		if err := fill(scaleTarget, fmt.Sprintf("evt_scale_%d_", size), size-stored, cfg.Workers); err != nil {
			return nil, err
		}
		stored = size
		sat := attack(stripeTargeter(scaleTarget, fmt.Sprintf("evt_sat%d_", size), &seq, 0), 0, cfg.Duration, cfg.Workers)
		lat := attack(stripeTargeter(scaleTarget, fmt.Sprintf("evt_lat%d_", size), &seq, 0), cfg.Rates[len(cfg.Rates)/2], cfg.Duration, cfg.Workers)
		stored += int(sat.Requests + lat.Requests)
		label := fmt.Sprintf("ingest with %d stored", size)
		if size == cfg.ScaleSmall {
			smallRate, smallP99 = sat.Throughput, ms(lat.Latencies.P99)
			add(Row{Scenario: label, Metric: "saturation", Value: sat.Throughput, Unit: "req/s", Baseline: "respond 200 saturation, vegeta", Ratio: sat.Throughput / baseRPS})
			add(Row{Scenario: label, Metric: fmt.Sprintf("p99 @ %d/s", cfg.Rates[len(cfg.Rates)/2]), Value: smallP99, Unit: "ms"})
			continue
		}
		add(Row{Scenario: label, Metric: "saturation", Value: sat.Throughput, Unit: "req/s", Baseline: fmt.Sprintf("%d stored", cfg.ScaleSmall), Ratio: sat.Throughput / smallRate})
		add(Row{Scenario: label, Metric: fmt.Sprintf("p99 @ %d/s", cfg.Rates[len(cfg.Rates)/2]), Value: ms(lat.Latencies.P99), Unit: "ms", Baseline: fmt.Sprintf("%d stored", cfg.ScaleSmall), Ratio: ms(lat.Latencies.P99) / smallP99})
	}
	time.Sleep(time.Second)
	pendingLabel := fmt.Sprintf("%d pending", stored)
	add(Row{Scenario: pendingLabel, Metric: "RSS", Value: scale.rssMB("VmRSS"), Unit: "MB"})
	add(Row{Scenario: pendingLabel, Metric: "RSS, heap and stacks", Value: scale.rssMB("RssAnon"), Unit: "MB"})
	add(Row{Scenario: pendingLabel, Metric: "RSS, mapped files", Value: scale.rssMB("RssFile"), Unit: "MB"})
	scale.stop()
	onDisk := storeSizeMB(filepath.Join(scaleDir, "caddy", "hookgate", "hookgate.db"))
	add(Row{Scenario: pendingLabel, Metric: "store on disk", Value: onDisk, Unit: "MB"})
	add(Row{Scenario: pendingLabel, Metric: "store on disk per event", Value: onDisk * (1 << 20) / float64(stored) / 1024, Unit: "KB",
		Baseline: "body size", Ratio: onDisk * (1 << 20) / float64(stored) / float64(len(eventBody("evt_scale_1000000_1000000")))})
	// First delivery after a start with the backlog pending.
	firstUp, err := startUpstream("")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(scaleDir, "routes.yaml"), []byte(routes(firstUp.addr, false)), 0o600); err != nil {
		return nil, err
	}
	if err := scale.start(binary); err != nil {
		return nil, err
	}
	if err := waitCount(firstUp, 1, 5*time.Minute); err != nil {
		return nil, fmt.Errorf("first delivery: %w", err)
	}
	firstAfter := time.Unix(0, firstUp.first.Load()).Sub(scale.started)
	scale.stop()
	add(Row{Scenario: fmt.Sprintf("%d pending", stored), Metric: "start to first delivery", Value: firstAfter.Seconds(), Unit: "s"})
	return rows, nil
}

// RunAck measures the ACK figures alone. binary, when empty, is built first.
func RunAck(cfg Config, binary string) ([]Row, error) {
	work, err := os.MkdirTemp("", "hookgate-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	if binary == "" {
		if binary, err = buildBinary(work); err != nil {
			return nil, fmt.Errorf("building: %w", err)
		}
	}
	return AckFigures(cfg, binary, work)
}

// value finds a figure already measured in this run.
func value(rows []Row, scenario, metric string) float64 {
	for _, r := range rows {
		if r.Scenario == scenario && r.Metric == metric {
			return r.Value
		}
	}
	return 0
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// acceptedAll fails a step whose requests were not all answered 200.
// answeredOnly200or503 fails a step with any answer other than an ACK or
// a refusal to write.
func answeredOnly200or503(m *vegeta.Metrics) error {
	if m.Requests == 0 {
		return errors.New("no requests")
	}
	if ok, refused := m.StatusCodes["200"], m.StatusCodes["503"]; uint64(ok+refused) != m.Requests || ok == 0 {
		return fmt.Errorf("%d of %d answered 200, %d 503: %v %v", ok, m.Requests, refused, m.StatusCodes, m.Errors)
	}
	return nil
}

func acceptedAll(m *vegeta.Metrics) error {
	if m.Requests == 0 {
		return errors.New("no requests")
	}
	if ok := m.StatusCodes["200"]; uint64(ok) != m.Requests {
		return fmt.Errorf("%d of %d answered 200: %v %v", ok, m.Requests, m.StatusCodes, m.Errors)
	}
	return nil
}

// fill sends n unique events as fast as the workers go.
func fill(url, prefix string, n int, workers uint64) error {
	if n <= 0 {
		return nil
	}
	var seq atomic.Int64
	base := stripeTargeter(url, prefix, &seq, 0)
	tr := func(t *vegeta.Target) error {
		if seq.Load() >= int64(n) {
			return vegeta.ErrNoTargets
		}
		return base(t)
	}
	m := attack(tr, 0, 24*time.Hour, workers)
	if ok := m.StatusCodes["200"]; ok < n {
		return fmt.Errorf("filling %s: %d of %d accepted: %v %v", prefix, ok, n, m.StatusCodes, m.Errors)
	}
	return nil
}

func waitCount(u *upstream, want int64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for u.count.Load() < want {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d delivered after %s", u.count.Load(), want, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}
