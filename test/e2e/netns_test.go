package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A netCluster is three real nats-server processes, each in a network
// namespace of its own, clustered over veth links that meet on a bridge in
// the root namespace, where the gateways and the test run:
//
//	root namespace: gateways, test ── bridge hgp<pid><x>b (10.213.N.1/24)
//	                                    ├─ hgp<pid><x>v1 ═ eth0 in hgp<pid>-<x>-n1 (10.213.N.11)
//	                                    ├─ hgp<pid><x>v2 ═ eth0 in hgp<pid>-<x>-n2 (10.213.N.12)
//	                                    └─ hgp<pid><x>v3 ═ eth0 in hgp<pid>-<x>-n3 (10.213.N.13)
//
// Node to node traffic crosses the bridge's forward path, gateway to node
// traffic its input and output paths, so one nftables table of the bridge
// family (hgp<pid><x>) cuts or thins any of them without touching the
// processes: a dropped packet is silence, as in a real partition, not an
// error. Faults use nftables and tc's tbf, which any Debian kernel has;
// tc's netem is not used because the kernels some of this suite runs on are
// built without it.
type netCluster struct {
	t      *testing.T
	opts   netClusterOptions
	name   string // the bridge, veths and nftables table start with it
	subnet string // the first three octets
	nodes  []*netNode

	mu     sync.Mutex
	faults clusterFaults
}

// netClusterOptions configures startNetCluster.
type netClusterOptions struct {
	// SyncAlways sets sync_interval: always on every node: each write is
	// flushed to disk before it is acknowledged.
	SyncAlways bool
	// StoreDirs, when set, is each node's JetStream store_dir, so a
	// filesystem that can drop what was never flushed (a power-loss
	// simulator) can be mounted there; by default each is a fresh temporary
	// folder.
	StoreDirs []string
	// PowerLoss, when set, runs in powerCut after every node was killed and
	// before any restarts: it is where such a filesystem discards unflushed
	// writes. Without it, kill -9 keeps them in the page cache.
	PowerLoss func(t *testing.T)
}

// netNode is one nats-server in its namespace.
type netNode struct {
	name     string // its server_name, n1…n3
	ns       string
	ip       string
	hostLink string // the bridge side of its veth
	storeDir string
	conf     string
	logPath  string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// clusterFaults is what the cluster's nftables table drops.
type clusterFaults struct {
	isolated    map[int]bool // every packet to or from the node
	gatewaysCut bool         // every packet between the root namespace and the nodes
	lossy       map[int]bool // lossyPercent of the node's packets, each way, and a slow link
}

// lossyPercent is the share of a lossy link's packets dropped, each way.
const lossyPercent = 30

// slowLink is the tbf qdisc put on a lossy link, both ends: a link of
// 2 Mbit/s whose queue holds up to 100 ms of packets, which delays packets
// while replication fills it and drops them beyond.
var slowLink = []string{"tbf", "rate", "2mbit", "burst", "16kb", "latency", "100ms"}

var (
	natsServerOnce sync.Once
	natsServerPath string
	natsServerErr  error
	clusterSeq     atomic.Int64
)

// natsServerBinary builds nats-server from the module test/e2e requires,
// once per test binary run, beside the hookgate binary (removed by TestMain).
func natsServerBinary(t *testing.T) string {
	t.Helper()
	natsServerOnce.Do(func() {
		path := filepath.Join(filepath.Dir(binary), "nats-server")
		out, err := exec.Command("go", "build", "-o", path, "github.com/nats-io/nats-server/v2").CombinedOutput()
		if err != nil {
			natsServerErr = fmt.Errorf("building nats-server: %v\n%s", err, out)
			return
		}
		natsServerPath = path
	})
	if natsServerErr != nil {
		t.Fatal(natsServerErr)
	}
	return natsServerPath
}

// requireNetAdmin fails the test, saying why, where network namespaces,
// bridges and nftables cannot be used.
func requireNetAdmin(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("%s creates network namespaces, veth links and nftables rules: run it as root (sudo env \"PATH=$PATH\" go test -run '^%s$' ./test/e2e/)", t.Name(), t.Name())
	}
	for tool, pkg := range map[string]string{"ip": "iproute2", "tc": "iproute2", "nft": "nftables"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s needs %s: apt-get install -y %s", t.Name(), tool, pkg)
		}
	}
}

// sh runs a command and fails the test with its output if it fails.
func (c *netCluster) sh(stdin string, args ...string) {
	c.t.Helper()
	if out, err := runCmd(stdin, args...); err != nil {
		c.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func runCmd(stdin string, args ...string) (string, error) {
	cmd := exec.Command(args[0], args[1:]...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// removeStaleNetworks deletes the namespaces, bridges and nftables tables
// this test left behind in a run whose process has died (a test binary
// ended by its timeout runs no cleanup). Those of live processes are left
// alone: they may be another run's.
func removeStaleNetworks() {
	stale := func(name string) bool {
		m := regexp.MustCompile(`^hgp(\d+)[-a-z]`).FindStringSubmatch(name)
		if m == nil {
			return false
		}
		pid, _ := strconv.Atoi(m[1])
		return pid != os.Getpid() && syscall.Kill(pid, 0) == syscall.ESRCH
	}
	if out, err := runCmd("", "ip", "netns", "list"); err == nil {
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && stale(f[0]) {
				runCmd("", "ip", "netns", "del", f[0])
			}
		}
	}
	if out, err := runCmd("", "ip", "-o", "link", "show", "type", "bridge"); err == nil {
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 1 && stale(strings.TrimSuffix(f[1], ":")) {
				runCmd("", "ip", "link", "del", strings.TrimSuffix(f[1], ":"))
			}
		}
	}
	if out, err := runCmd("", "nft", "list", "tables", "bridge"); err == nil {
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) == 3 && stale(f[2]) {
				runCmd("", "nft", "delete", "table", "bridge", f[2])
			}
		}
	}
}

// freeSubnet picks 10.213.N.0/24 with no address of this machine in it.
func freeSubnet(t *testing.T, seed int) string {
	t.Helper()
	out, err := runCmd("", "ip", "-4", "-o", "addr", "show")
	if err != nil {
		t.Fatalf("ip addr: %v\n%s", err, out)
	}
	for i := range 250 {
		subnet := fmt.Sprintf("10.213.%d", 1+(seed+i)%250)
		if !strings.Contains(out, " "+subnet+".") {
			return subnet
		}
	}
	t.Fatal("no free 10.213.N.0/24 subnet")
	return ""
}

// startNetCluster builds the namespaces and links, starts the three nodes
// and returns once the cluster takes writes on an R3 stream. Everything is
// removed when the test ends.
func startNetCluster(t *testing.T, opts netClusterOptions) *netCluster {
	t.Helper()
	requireNetAdmin(t)
	natsServerBinary(t) // built before any namespace exists: a failed build leaves nothing to undo
	removeStaleNetworks()
	seq := clusterSeq.Add(1)
	tag := string(rune('a' + (seq-1)%26))
	c := &netCluster{t: t, opts: opts, name: fmt.Sprintf("hgp%d%s", os.Getpid(), tag),
		subnet: freeSubnet(t, os.Getpid()+int(seq)),
		faults: clusterFaults{isolated: map[int]bool{}, lossy: map[int]bool{}}}
	bridge := c.name + "b"
	// Registered first, so a setup that fails half-way is undone too.
	t.Cleanup(c.teardown)
	for i := range 3 {
		n := &netNode{name: fmt.Sprintf("n%d", i+1), ns: fmt.Sprintf("hgp%d-%s-n%d", os.Getpid(), tag, i+1),
			ip: fmt.Sprintf("%s.%d", c.subnet, 11+i), hostLink: fmt.Sprintf("%sv%d", c.name, i+1)}
		if len(opts.StoreDirs) > i {
			n.storeDir = opts.StoreDirs[i]
		} else {
			n.storeDir = t.TempDir()
		}
		c.nodes = append(c.nodes, n)
	}

	if out, err := runCmd("", "ip", "link", "add", bridge, "type", "bridge"); err != nil {
		t.Fatalf("cannot create a bridge (%v: %s): %s needs root with CAP_NET_ADMIN (in a container: --cap-add NET_ADMIN --cap-add SYS_ADMIN, or --privileged)", err, strings.TrimSpace(out), t.Name())
	}
	c.sh("", "ip", "addr", "add", c.subnet+".1/24", "dev", bridge)
	c.sh("", "ip", "link", "set", bridge, "up")
	for i, n := range c.nodes {
		peer := fmt.Sprintf("%sp%d", c.name, i+1)
		if out, err := runCmd("", "ip", "netns", "add", n.ns); err != nil {
			t.Fatalf("cannot create network namespace %s (%v: %s): %s needs root with CAP_SYS_ADMIN", n.ns, err, strings.TrimSpace(out), t.Name())
		}
		c.sh("", "ip", "link", "add", n.hostLink, "type", "veth", "peer", "name", peer)
		c.sh("", "ip", "link", "set", peer, "netns", n.ns)
		c.sh("", "ip", "-n", n.ns, "link", "set", peer, "name", "eth0")
		c.sh("", "ip", "-n", n.ns, "addr", "add", n.ip+"/24", "dev", "eth0")
		c.sh("", "ip", "-n", n.ns, "link", "set", "lo", "up")
		c.sh("", "ip", "-n", n.ns, "link", "set", "eth0", "up")
		c.sh("", "ip", "link", "set", n.hostLink, "master", bridge)
		c.sh("", "ip", "link", "set", n.hostLink, "up")
	}
	c.sh(fmt.Sprintf(`table bridge %s {
	chain input { type filter hook input priority 0; }
	chain output { type filter hook output priority 0; }
	chain forward { type filter hook forward priority 0; }
}
`, c.name), "nft", "-f", "-")

	var routes []string
	for _, n := range c.nodes {
		routes = append(routes, fmt.Sprintf("nats://%s:6222", n.ip))
	}
	for _, n := range c.nodes {
		syncLine := ""
		if opts.SyncAlways {
			syncLine = "\n  sync_interval: always"
		}
		n.conf = filepath.Join(t.TempDir(), n.name+".conf")
		n.logPath = filepath.Join(filepath.Dir(n.conf), n.name+".log")
		writeFile(t, n.conf, fmt.Sprintf(`server_name: %s
listen: "%s:4222"
http: "%s:8222"
jetstream {
  store_dir: %q%s
}
cluster {
  name: hookgate-partitions
  listen: "%s:6222"
  routes: [%s]
}
`, n.name, n.ip, n.ip, n.storeDir, syncLine, n.ip, strings.Join(routes, ", ")))
		c.start(n)
	}
	c.waitWritable(time.Minute)
	return c
}

// start runs the node's nats-server in its namespace. Pdeathsig ends it
// with the test binary, even when no cleanup runs.
func (c *netCluster) start(n *netNode) {
	c.t.Helper()
	logFile, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	defer logFile.Close()
	// ip netns exec switches namespace and execs the server: the process
	// started is the server itself.
	cmd := exec.Command("ip", "netns", "exec", n.ns, natsServerBinary(c.t), "-c", n.conf)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("starting %s: %v", n.name, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	n.mu.Lock()
	n.cmd, n.exited = cmd, exited
	n.mu.Unlock()
}

// kill9 sends SIGKILL to the nodes' processes, as close together as the
// loop goes, then waits until all have exited.
func (c *netCluster) kill9(nodes ...*netNode) {
	var waits []chan struct{}
	for _, n := range nodes {
		n.mu.Lock()
		if n.cmd != nil {
			n.cmd.Process.Signal(syscall.SIGKILL)
			waits = append(waits, n.exited)
		}
		n.cmd = nil
		n.mu.Unlock()
	}
	for _, w := range waits {
		<-w
	}
}

// powerCut kills every node at once with SIGKILL, runs opts.PowerLoss, and
// starts them again; it returns once the cluster takes writes.
func (c *netCluster) powerCut() {
	c.t.Helper()
	c.kill9(c.nodes...)
	if c.opts.PowerLoss != nil {
		c.opts.PowerLoss(c.t)
	}
	for _, n := range c.nodes {
		c.start(n)
	}
	c.waitWritable(2 * time.Minute)
}

func (c *netCluster) teardown() {
	c.kill9(c.nodes...)
	if c.t.Failed() {
		for _, n := range c.nodes {
			if b, err := os.ReadFile(n.logPath); err == nil {
				c.t.Logf("%s log (last 4 KiB):\n%s", n.name, tail(string(b), 4096))
			}
		}
	}
	runCmd("", "nft", "delete", "table", "bridge", c.name)
	for _, n := range c.nodes {
		// Deleting a namespace deletes its end of the veth, and so the pair.
		runCmd("", "ip", "netns", "del", n.ns)
	}
	runCmd("", "ip", "link", "del", c.name+"b")
}

// URLs lists the nodes' client URLs, comma-separated, as routes.yaml takes them.
func (c *netCluster) URLs() string {
	var urls []string
	for _, n := range c.nodes {
		urls = append(urls, fmt.Sprintf("nats://%s:4222", n.ip))
	}
	return strings.Join(urls, ",")
}

// connect opens a client connection to the cluster for the test itself.
func (c *netCluster) connect() (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(c.URLs(), nats.Timeout(2*time.Second), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// waitWritable waits until the cluster stores a message on an R3 stream:
// a meta leader, a stream leader and a quorum are all there.
func (c *netCluster) waitWritable(timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		last = func() error {
			nc, js, err := c.connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "READY", Subjects: []string{"ready"}, Replicas: 3}); err != nil {
				return err
			}
			_, err = js.Publish(ctx, "ready", nil)
			return err
		}()
		if last == nil {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	c.t.Fatalf("the NATS cluster took no write within %s: %v", timeout, last)
}

// streamLeader returns the index of the node leading a stream's replicas,
// as the JetStream API reports it.
func (c *netCluster) streamLeader(stream string) (int, error) {
	nc, js, err := c.connect()
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, err
	}
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return 0, fmt.Errorf("no leader for %s", stream)
	}
	for i, n := range c.nodes {
		if n.name == info.Cluster.Leader {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s is led by unknown server %q", stream, info.Cluster.Leader)
}

// clientConns counts the connections named hookgate (the gateways' store
// connections) on node i, from its monitoring endpoint.
func (c *netCluster) clientConns(i int) int {
	client := http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(fmt.Sprintf("http://%s/connz?limit=1024", net.JoinHostPort(c.nodes[i].ip, "8222")))
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var connz struct {
		Connections []struct {
			Name string `json:"name"`
		} `json:"connections"`
	}
	if json.NewDecoder(resp.Body).Decode(&connz) != nil {
		return -1
	}
	n := 0
	for _, conn := range connz.Connections {
		if conn.Name == "hookgate" {
			n++
		}
	}
	return n
}

// applyFaults replaces the nftables rules with what c.faults says, in one
// transaction, and puts the slow-link qdisc on lossy links.
func (c *netCluster) applyFaults(change func(f *clusterFaults)) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	wasLossy := map[int]bool{}
	for i, v := range c.faults.lossy {
		wasLossy[i] = v
	}
	change(&c.faults)
	var b strings.Builder
	for _, chain := range []string{"input", "output", "forward"} {
		fmt.Fprintf(&b, "flush chain bridge %s %s\n", c.name, chain)
	}
	rule := func(chain, match string) { fmt.Fprintf(&b, "add rule bridge %s %s %s\n", c.name, chain, match) }
	if c.faults.gatewaysCut {
		rule("input", "drop")
		rule("output", "drop")
	}
	for i, n := range c.nodes {
		drop := ""
		switch {
		case c.faults.isolated[i]:
			drop = "drop"
		case c.faults.lossy[i]:
			drop = fmt.Sprintf("numgen random mod 100 < %d drop", lossyPercent)
		default:
			continue
		}
		for _, chain := range []string{"input", "forward"} {
			rule(chain, fmt.Sprintf("iifname %q %s", n.hostLink, drop))
		}
		for _, chain := range []string{"output", "forward"} {
			rule(chain, fmt.Sprintf("oifname %q %s", n.hostLink, drop))
		}
	}
	c.sh(b.String(), "nft", "-f", "-")
	for i, n := range c.nodes {
		switch now := c.faults.lossy[i]; {
		case now && !wasLossy[i]:
			c.sh("", append([]string{"tc", "qdisc", "replace", "dev", n.hostLink, "root"}, slowLink...)...)
			c.sh("", append([]string{"ip", "netns", "exec", n.ns, "tc", "qdisc", "replace", "dev", "eth0", "root"}, slowLink...)...)
		case !now && wasLossy[i]:
			c.sh("", "tc", "qdisc", "del", "dev", n.hostLink, "root")
			c.sh("", "ip", "netns", "exec", n.ns, "tc", "qdisc", "del", "dev", "eth0", "root")
		}
	}
}

// heal removes every fault.
func (c *netCluster) heal() {
	c.t.Helper()
	c.applyFaults(func(f *clusterFaults) { *f = clusterFaults{isolated: map[int]bool{}, lossy: map[int]bool{}} })
}

// queued reports what is still to do in the store named stream: work
// messages not yet settled and events not yet dispatched.
func (c *netCluster) queued(stream string) (work, undispatched uint64, err error) {
	nc, js, err := c.connect()
	if err != nil {
		return 0, 0, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, err := js.Stream(ctx, stream+"_WORK")
	if err != nil {
		return 0, 0, err
	}
	wi, err := ws.Info(ctx)
	if err != nil {
		return 0, 0, err
	}
	cons, err := js.Consumer(ctx, stream, "dispatch")
	if err != nil {
		return 0, 0, err
	}
	ci, err := cons.Info(ctx)
	if err != nil {
		return 0, 0, err
	}
	return wi.State.Msgs, ci.NumPending + uint64(ci.NumAckPending), nil
}

// missingEvents returns the ids, of those given, that have no message in
// the events stream.
func (c *netCluster) missingEvents(stream string, ids []string) ([]string, error) {
	nc, js, err := c.connect()
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	// The stream allows direct gets, which any replica answers: one that
	// was just isolated may not have caught up yet. Messages not found are
	// asked for again for 30 s; those still not found are missing.
	missing := ids
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		var still []string
		for _, id := range missing {
			_, err := st.GetLastMsgForSubject(ctx, stream+".ev."+id)
			switch {
			case errors.Is(err, jetstream.ErrMsgNotFound):
				still = append(still, id)
			case err != nil:
				return nil, fmt.Errorf("reading event %s: %w", id, err)
			}
		}
		missing = still
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	return missing, nil
}
