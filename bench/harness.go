package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

const stripeSecret = "whsec_bench_secret"

// gatewayProc is one running hookgate.
type gatewayProc struct {
	cmd        *exec.Cmd
	dir        string
	port       int
	admin      int
	started    time.Time
	exited     chan struct{}
	caddyfile  string
	routesPath string
	// wrap, when set, is a command the gateway runs under (strace).
	wrap []string
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// site is the Caddyfile site body under test.
func startGateway(binary, dir, site, routes string) (*gatewayProc, error) {
	return startGatewayWith(binary, dir, site, routes, "", nil)
}

// startGatewayWith starts a gateway whose Caddyfile has more sites after
// the one under test, run under wrap when set.
func startGatewayWith(binary, dir, site, routes, moreSites string, wrap []string) (*gatewayProc, error) {
	g := &gatewayProc{dir: dir, port: freePort(), admin: freePort(), exited: make(chan struct{}), routesPath: filepath.Join(dir, "routes.yaml"), wrap: wrap}
	g.caddyfile = fmt.Sprintf("{\n\tadmin 127.0.0.1:%d\n\tstorage file_system %s/caddy-data\n\tlog {\n\t\tlevel ERROR\n\t}\n}\n:%d {\n%s\n}\n%s", g.admin, dir, g.port, site, moreSites)
	if err := os.WriteFile(filepath.Join(dir, "Caddyfile"), []byte(g.caddyfile), 0o600); err != nil {
		return nil, err
	}
	if routes != "" {
		if err := os.WriteFile(g.routesPath, []byte(routes), 0o600); err != nil {
			return nil, err
		}
	}
	return g, g.start(binary)
}

func (g *gatewayProc) start(binary string) error {
	g.exited = make(chan struct{})
	args := []string{binary, "run", "--config", filepath.Join(g.dir, "Caddyfile"), "--adapter", "caddyfile"}
	if g.wrap != nil {
		args = append(slices.Clone(g.wrap), args...)
	}
	g.cmd = exec.Command(args[0], args[1:]...)
	g.cmd.Dir = g.dir
	g.cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+g.dir, "XDG_CONFIG_HOME="+g.dir)
	log, _ := os.Create(filepath.Join(g.dir, "gateway.log"))
	g.cmd.Stdout, g.cmd.Stderr = log, log
	g.started = time.Now()
	if err := g.cmd.Start(); err != nil {
		return err
	}
	go func() { g.cmd.Wait(); close(g.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", g.port)); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-g.exited:
			out, _ := os.ReadFile(filepath.Join(g.dir, "gateway.log"))
			return fmt.Errorf("gateway exited: %s", tail(string(out)))
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("gateway did not start")
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

func (g *gatewayProc) stop() {
	pid := g.cmd.Process.Pid
	if g.wrap != nil {
		// The gateway is the wrapper's child; the wrapper ends after it.
		children, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if f := strings.Fields(string(children)); len(f) > 0 {
			pid, _ = strconv.Atoi(f[0])
		}
	}
	syscall.Kill(pid, syscall.SIGTERM)
	select {
	case <-g.exited:
	case <-time.After(20 * time.Second):
		g.cmd.Process.Kill()
		<-g.exited
	}
}

// reload applies a new routes file through the admin API.
func (g *gatewayProc) reload(routes string) error {
	if err := os.WriteFile(g.routesPath, []byte(routes), 0o600); err != nil {
		return err
	}
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/load", g.admin), strings.NewReader(g.caddyfile))
	req.Header.Set("Content-Type", "text/caddyfile")
	req.Header.Set("Cache-Control", "must-revalidate")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("reload: %s", b)
	}
	return nil
}

// cpuSeconds reads the CPU time the process has used, user and system.
func (g *gatewayProc) cpuSeconds() float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", g.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The fields after the command's name, which is in parentheses.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100 // clock ticks; USER_HZ is 100 on Linux
}

// rssMB reads the process's resident memory: all of it (VmRSS), or one
// part (RssAnon: the heap and stacks; RssFile: mapped files, bbolt's among
// them).
func (g *gatewayProc) rssMB(field string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

func (g *gatewayProc) url(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", g.port, path)
}

// eventBody is a Stripe-style event of about 2 KB with a unique id.
func eventBody(id string) []byte {
	pad := strings.Repeat("x", 1700)
	return []byte(`{"id":"` + id + `","object":"event","api_version":"2024-06-20","type":"payment_intent.succeeded","livemode":false,"data":{"object":{"id":"pi_` + id + `","object":"payment_intent","amount":2000,"currency":"usd","description":"` + pad + `"}}}`)
}

func stripeSignature(body []byte, now time.Time) string {
	ts := strconv.FormatInt(now.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(stripeSecret))
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// stripeTargeter makes signed events; duplicateEvery > 0 resends an
// earlier id every so many requests (a provider's retry, freshly signed).
func stripeTargeter(url, prefix string, seq *atomic.Int64, duplicateEvery int64) vegeta.Targeter {
	return func(t *vegeta.Target) error {
		n := seq.Add(1)
		id := n
		if duplicateEvery > 0 && n%duplicateEvery == 0 && n > 1 {
			id = n - 1
		}
		body := eventBody(prefix + strconv.FormatInt(id, 10))
		t.Method, t.URL, t.Body = http.MethodPost, url, body
		t.Header = http.Header{"Content-Type": {"application/json"}, "Stripe-Signature": {stripeSignature(body, time.Now())}}
		return nil
	}
}

// plainTargeter posts the same kind of body without signature work, for baselines.
func plainTargeter(url string, seq *atomic.Int64) vegeta.Targeter {
	return func(t *vegeta.Target) error {
		body := eventBody("evt_plain_" + strconv.FormatInt(seq.Add(1), 10))
		t.Method, t.URL, t.Body = http.MethodPost, url, body
		t.Header = http.Header{"Content-Type": {"application/json"}}
		return nil
	}
}

// attack runs a load: rate 0 means as fast as workers allow (saturation).
func attack(tr vegeta.Targeter, rate int, d time.Duration, workers uint64) *vegeta.Metrics {
	opts := []func(*vegeta.Attacker){vegeta.KeepAlive(true), vegeta.Timeout(30 * time.Second), vegeta.Connections(int(workers) * 2)}
	pacer := vegeta.Rate{Freq: rate, Per: time.Second}
	if rate == 0 {
		opts = append(opts, vegeta.Workers(workers), vegeta.MaxWorkers(workers))
	} else {
		opts = append(opts, vegeta.Workers(workers))
	}
	a := vegeta.NewAttacker(opts...)
	var m vegeta.Metrics
	for res := range a.Attack(tr, pacer, d, "bench") {
		m.Add(res)
	}
	m.Close()
	return &m
}

// upstream counts deliveries and remembers when the first came.
type upstream struct {
	srv   *http.Server
	addr  string
	count atomic.Int64
	first atomic.Int64 // unix nanos of the first delivery
}

func startUpstream(addr string) (*upstream, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	u := &upstream{addr: l.Addr().String()}
	u.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if u.count.Add(1) == 1 {
			u.first.Store(time.Now().UnixNano())
		}
	})}
	go u.srv.Serve(l)
	return u, nil
}

// storeSizeMB is the size of a bbolt store: its file and the segments of
// its body log and its write-ahead log.
func storeSizeMB(path string) float64 {
	var size int64
	if info, err := os.Stat(path); err == nil {
		size += info.Size()
	}
	// The body log and the write-ahead log are part of the store too.
	segs, _ := filepath.Glob(filepath.Join(path+".bodies", "*.seg"))
	logged, _ := filepath.Glob(filepath.Join(path+".wal", "*.seg"))
	for _, seg := range append(segs, logged...) {
		if info, err := os.Stat(seg); err == nil {
			size += info.Size()
		}
	}
	return float64(size) / (1 << 20)
}
