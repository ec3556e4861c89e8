package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Profile runs signed ingest at saturation against a gateway built from
// this checkout (or binary, when set), delivering to a local upstream when deliver is set, and
// writes a CPU profile of the gateway taken from Caddy's admin endpoint
// (/debug/pprof/profile) meanwhile.
func Profile(cfg Config, to string, deliver bool, binary string) error {
	work, err := os.MkdirTemp("", "hookgate-profile-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if binary == "" {
		if binary, err = buildBinary(work); err != nil {
			return err
		}
	}
	up, err := startUpstream("")
	if err != nil {
		return err
	}
	g, err := startGateway(binary, work, gatewaySite, routes(up.addr, !deliver))
	if err != nil {
		return err
	}
	defer g.stop()
	var seq atomic.Int64
	seconds := int(cfg.Duration.Seconds())
	done := make(chan error, 1)
	go func() {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", g.admin, seconds))
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(to)
		if err != nil {
			done <- err
			return
		}
		_, err = io.Copy(f, resp.Body)
		done <- errorsJoin(err, f.Close())
	}()
	time.Sleep(100 * time.Millisecond)
	m := attack(stripeTargeter(g.url("/webhooks/stripe"), "evt_prof_", &seq, 0), 0, cfg.Duration+time.Second, cfg.Workers)
	if err := acceptedAll(m); err != nil {
		return err
	}
	fmt.Printf("ingest at saturation: %.0f req/s, p99 %.2f ms; %d delivered\n", m.Throughput, ms(m.Latencies.P99), up.count.Load())
	return <-done
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// Compare measures two gateway binaries side by side, alternating them
// round by round so that both see the same machine: ingest saturation
// (deliveries held back) and the gateway's CPU time per event, which a
// busy machine disturbs less than a rate, ACK p99 at the middle rate, and
// ingest with delivery. Each figure is the median of the rounds.
func Compare(cfg Config, other string, rounds int) ([]Row, error) {
	work, err := os.MkdirTemp("", "hookgate-compare-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	this, err := buildBinary(work)
	if err != nil {
		return nil, err
	}
	up, err := startUpstream("")
	if err != nil {
		return nil, err
	}
	rate := cfg.Rates[len(cfg.Rates)/2]
	type figures struct{ saturation, cpu, p99, both, bothCPU []float64 }
	results := map[string]*figures{this: {}, other: {}}
	var seq atomic.Int64
	for round := range rounds {
		for i, bin := range []string{this, other} {
			dir := filepath.Join(work, fmt.Sprintf("r%d-%d", round, i))
			os.MkdirAll(dir, 0o755)
			g, err := startGateway(bin, dir, gatewaySite, routes(up.addr, true))
			if err != nil {
				return nil, err
			}
			f := results[bin]
			cpu := g.cpuSeconds()
			m := attack(stripeTargeter(g.url("/webhooks/stripe"), "evt_cs_", &seq, 0), 0, cfg.Duration, cfg.Workers)
			f.saturation = append(f.saturation, m.Throughput)
			f.cpu = append(f.cpu, (g.cpuSeconds()-cpu)*1e6/float64(m.Requests))
			m = attack(stripeTargeter(g.url("/webhooks/stripe"), "evt_cr_", &seq, 0), rate, cfg.Duration, cfg.Workers)
			f.p99 = append(f.p99, ms(m.Latencies.P99))
			g.stop()
			dir += "-both"
			os.MkdirAll(dir, 0o755)
			g, err = startGateway(bin, dir, gatewaySite, routes(up.addr, false))
			if err != nil {
				return nil, err
			}
			before, start, cpu := up.count.Load(), time.Now(), g.cpuSeconds()
			m = attack(stripeTargeter(g.url("/webhooks/stripe"), "evt_cb_", &seq, 0), 0, cfg.Duration, cfg.Workers)
			delivered := float64(up.count.Load()-before) / time.Since(start).Seconds()
			f.both = append(f.both, min(m.Throughput, delivered))
			f.bothCPU = append(f.bothCPU, (g.cpuSeconds()-cpu)*1e6/float64(m.Requests))
			g.stop()
		}
	}
	median := func(v []float64) float64 {
		slices.Sort(v)
		return v[len(v)/2]
	}
	a, b := results[this], results[other]
	return []Row{
		{Scenario: "this checkout", Metric: "ingest saturation", Value: median(a.saturation), Unit: "req/s", Baseline: other, Ratio: median(a.saturation) / median(b.saturation)},
		{Scenario: other, Metric: "ingest saturation", Value: median(b.saturation), Unit: "req/s"},
		{Scenario: "this checkout", Metric: "gateway CPU per ingested event", Value: median(a.cpu), Unit: "µs", Baseline: other, Ratio: median(a.cpu) / median(b.cpu)},
		{Scenario: other, Metric: "gateway CPU per ingested event", Value: median(b.cpu), Unit: "µs"},
		{Scenario: "this checkout", Metric: fmt.Sprintf("p99 @ %d/s", rate), Value: median(a.p99), Unit: "ms", Baseline: other, Ratio: median(a.p99) / median(b.p99)},
		{Scenario: other, Metric: fmt.Sprintf("p99 @ %d/s", rate), Value: median(b.p99), Unit: "ms"},
		{Scenario: "this checkout", Metric: "ingest + delivery steady state", Value: median(a.both), Unit: "events/s", Baseline: other, Ratio: median(a.both) / median(b.both)},
		{Scenario: other, Metric: "ingest + delivery steady state", Value: median(b.both), Unit: "events/s"},
		{Scenario: "this checkout", Metric: "gateway CPU per event, ingest + delivery", Value: median(a.bothCPU), Unit: "µs", Baseline: other, Ratio: median(a.bothCPU) / median(b.bothCPU)},
		{Scenario: other, Metric: "gateway CPU per event, ingest + delivery", Value: median(b.bothCPU), Unit: "µs"},
	}, nil
}

// Footprint fills a gateway (deliveries held back) with n events and
// reports its resident memory, split into heap and mapped files, and its
// store's size per event, for this checkout and, when other is set,
// another build.
func Footprint(cfg Config, other string, n int) ([]Row, error) {
	work, err := os.MkdirTemp("", "hookgate-footprint-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	this, err := buildBinary(work)
	if err != nil {
		return nil, err
	}
	bins := []string{this}
	if other != "" {
		bins = append(bins, other)
	}
	var rows []Row
	for i, bin := range bins {
		name := "this checkout"
		if i == 1 {
			name = other
		}
		dir := filepath.Join(work, fmt.Sprint(i))
		os.MkdirAll(dir, 0o755)
		g, err := startGateway(bin, dir, gatewaySite, routes("127.0.0.1:1", true))
		if err != nil {
			return nil, err
		}
		if err := fill(g.url("/webhooks/stripe"), "evt_fp_", n, cfg.Workers); err != nil {
			g.stop()
			return nil, err
		}
		time.Sleep(time.Second)
		printMappings(g)
		label := fmt.Sprintf("%s, %d pending", name, n)
		rows = append(rows,
			Row{Scenario: label, Metric: "RSS", Value: g.rssMB("VmRSS"), Unit: "MB"},
			Row{Scenario: label, Metric: "RSS, heap and stacks", Value: g.rssMB("RssAnon"), Unit: "MB"},
			Row{Scenario: label, Metric: "RSS, mapped files", Value: g.rssMB("RssFile"), Unit: "MB"})
		g.stop()
		size := storeSizeMB(filepath.Join(dir, "caddy", "hookgate", "hookgate.db"))
		rows = append(rows, Row{Scenario: label, Metric: "store on disk per event", Value: size * (1 << 20) / float64(n) / 1024, Unit: "KB"})
		// Reopened, as after a restart: what the open itself brings in.
		if err := g.start(bin); err != nil {
			return nil, err
		}
		time.Sleep(2 * time.Second)
		printMappings(g)
		rows = append(rows, Row{Scenario: label + ", restarted", Metric: "RSS", Value: g.rssMB("VmRSS"), Unit: "MB"},
			Row{Scenario: label + ", restarted", Metric: "RSS, mapped files", Value: g.rssMB("RssFile"), Unit: "MB"})
		g.stop()
	}
	return rows, nil
}

// printMappings prints the process's mappings that hold over 4 MB resident,
// from /proc/PID/smaps: which file, or the heap, the memory is.
func printMappings(g *gatewayProc) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", g.cmd.Process.Pid))
	if err != nil {
		return
	}
	var mapping string
	for line := range strings.SplitSeq(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			mapping = line
			continue
		}
		if len(fields) == 3 && fields[0] == "Rss:" {
			if kb, _ := strconv.Atoi(fields[1]); kb > 4096 {
				fmt.Fprintf(os.Stderr, "%6d MB  %s\n", kb/1024, mapping)
			}
		}
	}
}
