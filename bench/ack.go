package main

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The ACK figures: what a provider sees, measured with clients light
// enough that the baseline (Caddy's `respond 200` in the same process)
// measures the server. Throughput comes from wrk (Debian's package), at a
// fixed number of connections; latency from a fixed-rate client that
// writes prepared requests on raw connections and times each answer from
// when the request was due (so a late answer delays nothing that follows
// it). The events are GitHub's: one body and signature, a new delivery id
// per request, so the client signs nothing.

const githubSecret = "gh-bench-secret-0123456789"

// githubBody is a push event of about 1.9 KB naming its delivery id: the
// GitHub preset also dedups by a digest of the signed body, so each event
// needs a body of its own.
func githubBody(buf []byte, id string) []byte {
	buf = append(buf, `{"ref":"refs/heads/main","after":"`...)
	buf = append(buf, id...)
	buf = append(buf, `","repository":{"id":1296269,"full_name":"octocat/Hello-World","description":"`...)
	buf = append(buf, githubPad...)
	return append(buf, `"},"pusher":{"name":"octocat"},"sender":{"login":"octocat","id":1}}`...)
}

var githubPad = strings.Repeat("x", 1700)

// githubSigner signs bodies, reusing its MAC.
type githubSigner struct{ mac hash.Hash }

func newGithubSigner() *githubSigner {
	return &githubSigner{mac: hmac.New(sha256.New, []byte(githubSecret))}
}

func (g *githubSigner) append(buf, body []byte) []byte {
	g.mac.Reset()
	g.mac.Write(body)
	var sum [sha256.Size]byte
	buf = append(buf, "sha256="...)
	return hex.AppendEncode(buf, g.mac.Sum(sum[:0]))
}

// appendGithubRequest appends a whole HTTP/1.1 request of a GitHub event.
func appendGithubRequest(buf []byte, id string, signer *githubSigner, body []byte) []byte {
	buf = append(buf, "POST /webhooks/github HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-GitHub-Event: push\r\nX-GitHub-Hook-ID: 1\r\nX-Hub-Signature-256: "...)
	buf = signer.append(buf, body)
	buf = append(buf, "\r\nX-GitHub-Delivery: "...)
	buf = append(buf, id...)
	buf = append(buf, "\r\nContent-Length: "...)
	buf = strconv.AppendInt(buf, int64(len(body)), 10)
	buf = append(buf, "\r\n\r\n"...)
	return append(buf, body...)
}

// ackRoutes is the routes file of the ACK figures: GitHub events to an
// upstream, held back (one attempt an hour) or delivered.
func ackRoutes(upstream string, heldBack bool) string {
	limit := ""
	if heldBack {
		limit = "    rate: 1/h\n    burst: 1\n"
	}
	return fmt.Sprintf(`max_body: 64KiB
upstreams:
  sink:
    url: http://%s
    concurrency: 64
%s    retry: {max_attempts: 3, initial_interval: 1h, max_interval: 1h}
sources:
  github:
    path: /webhooks/github
    provider: github
    secrets: [%s]
    default: [sink]
`, upstream, limit, githubSecret)
}

// threeSites is one process serving the baseline, the gateway and the
// upstream it delivers to, each on its own port.
type threeSites struct {
	*gatewayProc
	baseline, upstream int
}

func startThreeSites(binary, dir string, heldBack bool, wrap []string) (*threeSites, error) {
	t := &threeSites{baseline: freePort(), upstream: freePort()}
	routes := ackRoutes(fmt.Sprintf("127.0.0.1:%d", t.upstream), heldBack)
	extra := fmt.Sprintf("\n:%d {\n\trespond 200\n}\n:%d {\n\trespond 200\n}\n", t.baseline, t.upstream)
	g, err := startGatewayWith(binary, dir, gatewaySite, routes, extra, wrap)
	if err != nil {
		return nil, err
	}
	t.gatewayProc = g
	return t, nil
}

// wrkResult is what one wrk run measured.
type wrkResult struct {
	requests, non2xx int64
	seconds          float64
	rps              float64
	p50, p99         float64 // ms
	clientCPU        float64 // share of the machine's cores
}

var (
	wrkRequests = regexp.MustCompile(`(\d+) requests in ([\d.]+)(s|m|ms)`)
	wrkNon2xx   = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkRPS      = regexp.MustCompile(`Requests/sec:\s+([\d.]+)`)
	wrkPoolUsed = regexp.MustCompile(`pool used: (\d+)`)
	wrkPct      = regexp.MustCompile(`(?m)^\s+(50|99)\.000%\s+([\d.]+)(us|ms|s)`)
)

// wrkPool is how many prepared requests each wrk thread holds: more than
// it sends in a run (runWrk fails otherwise), since a request sent again
// would be a duplicate.
const wrkPool = 150_000

// runWrk runs wrk with two threads and conns connections against url for
// d. wrk cannot sign, so each thread sends requests prepared here, each a
// GitHub event of its own (delivery id prefix-thread-n), from a file in
// /dev/shm that it reads at start.
//
// repeat lets a thread send its pool again from the start: for the
// baseline, whose answer does not depend on the request.
func runWrk(url string, conns int, d time.Duration, prefix, dir string, repeat bool) (wrkResult, error) {
	perThread := wrkPool
	if d < 5*time.Second {
		perThread = 20_000
	}
	pool, err := os.MkdirTemp("/dev/shm", "hookgate-bench-")
	if err != nil {
		pool, err = os.MkdirTemp(dir, "pool-")
		if err != nil {
			return wrkResult{}, err
		}
	}
	defer os.RemoveAll(pool)
	signer := newGithubSigner()
	var body, buf []byte
	for thread := 1; thread <= 2; thread++ {
		buf = buf[:0]
		for n := range perThread {
			id := prefix + strconv.Itoa(thread) + "-" + strconv.Itoa(n)
			body = githubBody(body[:0], id)
			buf = append(appendGithubRequest(buf, id, signer, body), 0)
		}
		if err := os.WriteFile(filepath.Join(pool, fmt.Sprintf("%d.raw", thread)), buf, 0o600); err != nil {
			return wrkResult{}, err
		}
	}
	script := filepath.Join(dir, "github.lua")
	lua := `local threads = {}
function setup(thread)
  threads[#threads + 1] = thread
  thread:set("tid", #threads)
end
reqs, i = {}, 0
function init(args)
  local f = assert(io.open(args[1] .. "/" .. tid .. ".raw", "rb"))
  local data = f:read("*a")
  f:close()
  for r in data:gmatch("([^%z]+)%z") do reqs[#reqs + 1] = r end
end
request = function()
  i = i + 1
  if REPEAT and i > #reqs then i = 1 end
  return reqs[i]
end
done = function(summary, latency, requests)
  io.write(string.format("    50.000%%  %.0fus\n    99.000%%  %.0fus\n", latency:percentile(50), latency:percentile(99)))
  local most = 0
  for _, t in ipairs(threads) do most = math.max(most, t:get("i")) end
  io.write(string.format("pool used: %d of %d\n", most, #reqs > 0 and #reqs or ` + strconv.Itoa(perThread) + `))
end
`
	lua = fmt.Sprintf("REPEAT = %v\n", repeat) + lua
	if err := os.WriteFile(script, []byte(lua), 0o600); err != nil {
		return wrkResult{}, err
	}
	cmd := exec.Command("wrk", "-t2", fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", int(d.Seconds())), "--timeout", "30s", "-s", script, url, "--", pool)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return wrkResult{}, fmt.Errorf("wrk: %v: %s", err, out.String())
	}
	wall := time.Since(start).Seconds()
	var r wrkResult
	text := out.String()
	m := wrkRequests.FindStringSubmatch(text)
	if m == nil {
		return r, fmt.Errorf("wrk printed no request count: %s", text)
	}
	r.requests, _ = strconv.ParseInt(m[1], 10, 64)
	r.seconds, _ = strconv.ParseFloat(m[2], 64)
	used := wrkPoolUsed.FindStringSubmatch(text)
	if used == nil {
		return r, fmt.Errorf("wrk did not say how much of its pool it used: %s", text)
	}
	if n, _ := strconv.Atoi(used[1]); n >= perThread && !repeat {
		// A thread ran past its pool: its next requests were nil.
		return r, fmt.Errorf("a wrk thread used all %d requests of its pool: raise wrkPool", perThread)
	}
	if m := wrkNon2xx.FindStringSubmatch(text); m != nil {
		r.non2xx, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := wrkRPS.FindStringSubmatch(text); m != nil {
		r.rps, _ = strconv.ParseFloat(m[1], 64)
	}
	for _, m := range wrkPct.FindAllStringSubmatch(text, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		switch m[3] {
		case "us":
			v /= 1000
		case "s":
			v *= 1000
		}
		if m[1] == "50" {
			r.p50 = v
		} else {
			r.p99 = v
		}
	}
	ps := cmd.ProcessState
	r.clientCPU = (ps.UserTime() + ps.SystemTime()).Seconds() / wall / float64(runtime.NumCPU())
	return r, nil
}

// fixedRate is what one fixed-rate run measured.
type fixedRate struct {
	sent, ok            int
	p50, p99, p999, max float64 // ms, from when each request was due
	clientCPU           float64
}

// runFixedRate sends rate requests a second for d over conns keep-alive
// connections to addr, each request prepared by build(n, buf).
func runFixedRate(addr string, rate int, d time.Duration, conns int, build func(n int, buf []byte) []byte) (fixedRate, error) {
	var ru0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	total := int(d.Seconds() * float64(rate))
	interval := time.Second / time.Duration(rate)
	due := make(chan int, total)
	lat := make([]time.Duration, total)
	okCount := make([]bool, total)
	start := time.Now().Add(50 * time.Millisecond)
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return fixedRate{}, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			br := bufio.NewReaderSize(c, 16<<10)
			var buf []byte
			for n := range due {
				buf = build(n, buf[:0])
				if _, err := c.Write(buf); err != nil {
					errs <- err
					return
				}
				status, err := readResponse(br)
				if err != nil {
					errs <- err
					return
				}
				lat[n] = time.Since(start.Add(time.Duration(n) * interval))
				okCount[n] = status == 200
			}
		}()
	}
	wall := time.Now()
	for n := range total {
		if wait := time.Until(start.Add(time.Duration(n) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		due <- n
	}
	close(due)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fixedRate{}, err
	}
	elapsed := time.Since(wall).Seconds()
	var ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano()).Seconds() / elapsed / float64(runtime.NumCPU())
	r := fixedRate{sent: total, clientCPU: cpu}
	for _, ok := range okCount {
		if ok {
			r.ok++
		}
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return ms(lat[min(len(lat)-1, int(p*float64(len(lat))))]) }
	r.p50, r.p99, r.p999, r.max = q(0.5), q(0.99), q(0.999), ms(lat[len(lat)-1])
	return r, nil
}

// readResponse reads one HTTP/1.1 response, returning its status.
func readResponse(br *bufio.Reader) (int, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 {
		return 0, fmt.Errorf("short status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("status line %q", line)
	}
	length, chunked := 0, false
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if len(line) <= 2 {
			break
		}
		name, value, _ := bytes.Cut(bytes.TrimSpace(line), []byte(":"))
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			length, _ = strconv.Atoi(string(bytes.TrimSpace(value)))
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.Contains(bytes.ToLower(value), []byte("chunked"))
		}
	}
	if !chunked {
		_, err = br.Discard(length)
		return status, err
	}
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil {
			return 0, fmt.Errorf("chunk size %q", line)
		}
		if _, err := br.Discard(int(size) + 2); err != nil {
			return 0, err
		}
		if size == 0 {
			return status, nil
		}
	}
}

// githubRequest prepares the n-th GitHub event of a run, signing it.
func githubRequest(prefix string) func(n int, buf []byte) []byte {
	signer := newGithubSigner()
	var mu sync.Mutex
	return func(n int, buf []byte) []byte {
		id := prefix + strconv.Itoa(n)
		mu.Lock()
		defer mu.Unlock()
		return appendGithubRequest(buf, id, signer, githubBody(nil, id))
	}
}

// fsyncCounts reads strace -c's table: calls per system call, and the
// microseconds per fdatasync.
func fsyncCounts(path string) (map[string]int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		name := f[len(f)-1]
		if name != "fsync" && name != "fdatasync" {
			continue
		}
		// % time, seconds, usecs/call, calls, [errors,] syscall
		if n, err := strconv.ParseInt(f[3], 10, 64); err == nil {
			out[name] = n
		}
		if us, err := strconv.ParseInt(f[2], 10, 64); err == nil {
			out[name+" µs"] = us
		}
	}
	if len(out) == 0 {
		return nil, errors.New("strace counted no fsync or fdatasync: " + string(data))
	}
	return out, nil
}

// AckFigures measures the figures of the ACK: throughput at 64 and 8
// connections against the baseline, the ACK's latency at fixed rates
// against the baseline's, the client's CPU share in each, the CPU per
// event, and the fdatasyncs per ACKed event (counted by strace).
func AckFigures(cfg Config, binary, work string) ([]Row, error) {
	var rows []Row
	add := func(r Row) { rows = append(rows, r) }
	sub := func(name string) string {
		d := filepath.Join(work, name)
		os.MkdirAll(d, 0o755)
		return d
	}
	// Held back: ingest only.
	held, err := startThreeSites(binary, sub("ack-held"), true, nil)
	if err != nil {
		return nil, err
	}
	baseURL := fmt.Sprintf("http://127.0.0.1:%d/webhooks/github", held.baseline)
	base, err := runWrk(baseURL, cfg.Workers64(), cfg.Duration, "base-", held.dir, true)
	if err != nil {
		held.stop()
		return nil, err
	}
	add(Row{Scenario: "baseline respond 200, wrk c64", Metric: "throughput", Value: base.rps, Unit: "req/s"})
	add(Row{Scenario: "baseline respond 200, wrk c64", Metric: "client CPU", Value: 100 * base.clientCPU, Unit: "% of cores"})
	cpu0 := held.cpuSeconds()
	ing, err := runWrk(held.url("/webhooks/github"), cfg.Workers64(), cfg.Duration, "held-", held.dir, false)
	if err != nil {
		held.stop()
		return nil, err
	}
	cpu := held.cpuSeconds() - cpu0
	if ing.non2xx > 0 {
		held.stop()
		return nil, fmt.Errorf("ingest c64: %d of %d not answered 2xx", ing.non2xx, ing.requests)
	}
	add(Row{Scenario: "ingest, wrk c64", Metric: "throughput", Value: ing.rps, Unit: "req/s", Baseline: "respond 200 c64", Ratio: ing.rps / base.rps})
	add(Row{Scenario: "ingest, wrk c64", Metric: "p99", Value: ing.p99, Unit: "ms"})
	add(Row{Scenario: "ingest, wrk c64", Metric: "client CPU", Value: 100 * ing.clientCPU, Unit: "% of cores"})
	add(Row{Scenario: "ingest, wrk c64", Metric: "gateway CPU per event", Value: 1e6 * cpu / float64(ing.requests), Unit: "µs"})
	for _, rate := range cfg.AckRates {
		b, err := runFixedRate(fmt.Sprintf("127.0.0.1:%d", held.baseline), rate, cfg.Duration, 64, githubRequest(fmt.Sprintf("fb%d-", rate)))
		if err != nil {
			held.stop()
			return nil, fmt.Errorf("baseline at %d/s: %w", rate, err)
		}
		g, err := runFixedRate(fmt.Sprintf("127.0.0.1:%d", held.port), rate, cfg.Duration, 64, githubRequest(fmt.Sprintf("fr%d-", rate)))
		if err != nil {
			held.stop()
			return nil, fmt.Errorf("ingest at %d/s: %w", rate, err)
		}
		if g.ok != g.sent {
			held.stop()
			return nil, fmt.Errorf("ingest at %d/s: %d of %d answered 200", rate, g.ok, g.sent)
		}
		for _, q := range []struct {
			name     string
			gw, base float64
		}{{"p50", g.p50, b.p50}, {"p99", g.p99, b.p99}, {"p99.9", g.p999, b.p999}} {
			add(Row{Scenario: fmt.Sprintf("ACK @ %d/s, ingest", rate), Metric: q.name, Value: q.gw, Unit: "ms", Baseline: fmt.Sprintf("respond 200 %s %.2f ms", q.name, q.base), Ratio: q.gw / q.base})
		}
		add(Row{Scenario: fmt.Sprintf("ACK @ %d/s, ingest", rate), Metric: "client CPU", Value: 100 * g.clientCPU, Unit: "% of cores"})
	}
	held.stop()

	// Delivering to the upstream site of the same process.
	dlv, err := startThreeSites(binary, sub("ack-deliver"), false, nil)
	if err != nil {
		return nil, err
	}
	for _, conns := range []int{cfg.Workers64(), 8} {
		r, err := runWrk(dlv.url("/webhooks/github"), conns, cfg.Duration, fmt.Sprintf("dlv%d-", conns), dlv.dir, false)
		if err != nil {
			dlv.stop()
			return nil, err
		}
		if r.non2xx > 0 {
			dlv.stop()
			return nil, fmt.Errorf("delivering c%d: %d of %d not answered 2xx", conns, r.non2xx, r.requests)
		}
		label := fmt.Sprintf("ingest + delivery, wrk c%d", conns)
		row := Row{Scenario: label, Metric: "throughput", Value: r.rps, Unit: "req/s"}
		if conns != 8 {
			row.Baseline, row.Ratio = "respond 200 c64", r.rps/base.rps
		}
		add(row)
		add(Row{Scenario: label, Metric: "p99", Value: r.p99, Unit: "ms"})
	}
	if r, err := runFixedRate(fmt.Sprintf("127.0.0.1:%d", dlv.port), cfg.AckRates[0], cfg.Duration, 64, githubRequest("fd-")); err == nil {
		label := fmt.Sprintf("ACK @ %d/s, delivering", cfg.AckRates[0])
		add(Row{Scenario: label, Metric: "p50", Value: r.p50, Unit: "ms"})
		add(Row{Scenario: label, Metric: "p99", Value: r.p99, Unit: "ms"})
	} else {
		dlv.stop()
		return nil, err
	}
	dlv.stop()

	// fdatasyncs per ACKed event: the gateway under strace -c, which stops
	// it only at the counted calls (seccomp-bpf), at 64 connections.
	traced := filepath.Join(work, "strace.txt")
	st, err := startThreeSites(binary, sub("ack-strace"), true, []string{"strace", "-f", "-c", "--seccomp-bpf", "-e", "trace=fsync,fdatasync", "-o", traced})
	if err != nil {
		return nil, err
	}
	r, err := runWrk(st.url("/webhooks/github"), cfg.Workers64(), cfg.Duration, "strace-", st.dir, false)
	st.stop()
	if err != nil {
		return nil, err
	}
	counts, err := fsyncCounts(traced)
	if err != nil {
		return nil, err
	}
	acked := r.requests - r.non2xx
	syncs := counts["fsync"] + counts["fdatasync"]
	add(Row{Scenario: "ingest under strace, wrk c64", Metric: "fsync+fdatasync per ACKed event", Value: float64(syncs) / float64(acked),
		Unit: fmt.Sprintf("calls (%d for %d events, start and stop included)", syncs, acked)})
	add(Row{Scenario: "ingest under strace, wrk c64", Metric: "fdatasync duration", Value: float64(counts["fdatasync µs"]), Unit: "µs per call"})
	add(Row{Scenario: "ingest under strace, wrk c64", Metric: "throughput", Value: r.rps, Unit: "req/s"})
	return rows, nil
}

// Workers64 is the connection count of the throughput figures.
func (c Config) Workers64() int { return int(c.Workers) }

// AckProfile writes a CPU profile of the gateway (from Caddy's admin
// endpoint) while wrk sends GitHub events at 64 connections, deliveries
// held back.
func AckProfile(cfg Config, binary, out string) error {
	work, err := os.MkdirTemp("", "hookgate-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if binary == "" {
		if binary, err = buildBinary(work); err != nil {
			return fmt.Errorf("building: %w", err)
		}
	}
	held, err := startThreeSites(binary, work, true, nil)
	if err != nil {
		return err
	}
	defer held.stop()
	done := make(chan error, 1)
	go func() {
		_, err := runWrk(held.url("/webhooks/github"), cfg.Workers64(), cfg.Duration+10*time.Second, "prof-", work, false)
		done <- err
	}()
	time.Sleep(12 * time.Second) // past the pool's making and loading
	secs := max(1, int(cfg.Duration.Seconds())-4)
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", held.admin, secs))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return <-done
}
