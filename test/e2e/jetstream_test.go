package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hookgate/hookgate/internal/natstest"
)

// natsCluster starts n real NATS servers with JetStream, clustered over
// loopback, in this process, and waits until the cluster takes an R-n stream.
func natsCluster(t *testing.T, n int) []*server.Server {
	t.Helper()
	c, err := natstest.Start(n, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c.Nodes
}

// streamLeader names the server leading a stream's replicas.
func streamLeader(t *testing.T, nodes []*server.Server, stream string) string {
	t.Helper()
	nc, err := nats.Connect((&natstest.Cluster{Nodes: nodes}).URLs())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil || info.Cluster == nil || info.Cluster.Leader == "" {
		t.Fatalf("no leader for %s: %v", stream, err)
	}
	return info.Cluster.Leader
}

func clientURLs(nodes []*server.Server) string { return (&natstest.Cluster{Nodes: nodes}).URLs() }

// startSharedGateway starts an instance whose routes.yaml puts its store on
// JetStream; its Caddyfile names no bbolt file.
func startSharedGateway(t *testing.T, routes, passthrough string) *gateway {
	t.Helper()
	dir, port, admin := newGatewayDir(t, routes, passthrough)
	caddyfile, _ := os.ReadFile(filepath.Join(dir, "Caddyfile"))
	writeFile(t, filepath.Join(dir, "Caddyfile"), strings.Replace(string(caddyfile), "\t\tstorage ./data/hookgate.db\n", "", 1))
	return startGateway(t, dir, port, admin)
}

func sharedRoutes(natsURL string, replicas int, upstream string) string {
	return fmt.Sprintf(`storage:
  jetstream:
    url: %s
    stream: HGE2E
    replicas: %d
upstreams:
  app:
    url: http://%s
    timeout: 5s
    concurrency: 32
    retry: {initial_interval: 200ms, max_interval: 2s}
sources:
  github:
    path: /webhooks/github
    provider: github
    secrets: [gh-e2e-secret-0123456789]
    default: [app]
`, natsURL, replicas, upstream)
}

// TestJetStreamClusterTwoInstances runs two gateways on one three-node
// JetStream cluster: copies of one event sent to both are stored once and
// delivered once; then, under load spread over both, a NATS node is
// stopped, and every ACKed event still reaches the upstream.
func TestJetStreamClusterTwoInstances(t *testing.T) {
	nodes := natsCluster(t, 3)
	var slow atomic.Bool
	up := newRecorder(t, "", func(int) int {
		if slow.Load() {
			time.Sleep(2 * time.Second)
		}
		return 200
	})
	passthrough := newRecorder(t, "", nil)
	routes := sharedRoutes(clientURLs(nodes), 3, up.addr)
	a := startSharedGateway(t, routes, passthrough.addr)
	b := startSharedGateway(t, routes, passthrough.addr)
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")

	// 20 copies of one event, half to each instance, all at once.
	body := []byte(`{"action":"opened","number":1}`)
	h := github.sign(t, body, "")
	h.Set("X-GitHub-Delivery", "cluster-copy-1")
	var mu sync.Mutex
	ids := map[string]int{}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := a
			if i%2 == 1 {
				g = b
			}
			status, hdr, _ := g.post("/webhooks/github", h, body)
			mu.Lock()
			ids[fmt.Sprint(status, " ", hdr.Get("Hookgate-Event-Id"))]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(ids) != 1 {
		t.Fatalf("copies answered differently: %v", ids)
	}
	var copyID string
	for k := range ids {
		status, id, _ := strings.Cut(k, " ")
		if status != "200" || id == "" {
			t.Fatalf("copies answered %s", k)
		}
		copyID = id
	}
	waitFor(t, "the copied event delivered", 30*time.Second, func() bool { return len(up.byEvent()[copyID]) > 0 })

	// spread sends n events over both instances from 16 senders; stop, when
	// set, runs once after a third of them.
	spread := func(sender *loadSender, n int, stop func()) {
		work := make(chan *gateway)
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for g := range work {
					sender.send(g.url(""), 5)
				}
			}()
		}
		for i := range n {
			if i == n/3 && stop != nil {
				stop()
			}
			work <- []*gateway{a, b}[i%2]
		}
		close(work)
		wg.Wait()
	}

	// Normal operation: every event is ACKed and reaches the upstream
	// exactly once. On a busy machine a publish can outlast the store's
	// budget, and the gateway answers 503 with Retry-After, as it promises
	// when it cannot store: the sender retries those as providers do, so
	// what is held to is that each event is ACKed in the end, not at once.
	normal := newLoadSender(t)
	normal.retryUnavailable = true
	spread(normal, 600, nil)
	if acked := normal.ackedIDs(); len(acked) != 600 {
		t.Fatalf("normal operation: %d of 600 ACKed (%d errors, answers other than 200: %s)", len(acked), normal.errors.Load(), normal.statusCounts())
	}
	if dup := checkDelivered(t, up, normal.ackedIDs(), time.Minute); dup != 0 {
		t.Fatalf("normal operation: %d events delivered twice", dup)
	}

	// A reload keeps the shared store: same connection, new settings.
	writeFile(t, filepath.Join(b.dir, "routes.yaml"), strings.Replace(routes, "timeout: 5s", "timeout: 6s", 1))
	if status, resp := b.load(readFile(t, filepath.Join(b.dir, "Caddyfile"))); status != 200 {
		t.Fatalf("reload on JetStream: %d %s", status, resp)
	}

	// The leader of the events stream stops a third of the way into 1,500.
	sender := newLoadSender(t)
	sender.retryUnavailable = true
	const total = 1500
	var stopped string
	spread(sender, total, func() {
		stopped = streamLeader(t, nodes, "HGE2E")
		for _, ns := range nodes {
			if ns.Name() == stopped {
				ns.Shutdown()
			}
		}
	})
	acked := sender.ackedIDs()
	if len(acked) < total*9/10 {
		t.Fatalf("only %d of %d events ACKed (%d errors)", len(acked), total, sender.errors.Load())
	}
	duplicates := checkDelivered(t, up, acked, 2*time.Minute)
	if got := len(up.byEvent()[copyID]); got != 1 {
		t.Fatalf("the copied event was delivered %d times", got)
	}
	t.Logf("two instances, three NATS nodes, stream leader %s stopped after %d sends: %d of %d ACKed, 0 lost, %d delivered twice, %d answers retried",
		stopped, total/3, len(acked), total, duplicates, sender.retries.Load())

	// Instance a is killed while it holds deliveries to a slow upstream:
	// after their AckWait (timeout 5s + 30s) instance b delivers them.
	slow.Store(true)
	held := newLoadSender(t)
	for range 200 {
		held.send(a.url(""), 3)
	}
	a.kill9()
	slow.Store(false)
	heldAcked := held.ackedIDs()
	if len(heldAcked) != 200 {
		t.Fatalf("%d of 200 ACKed before the kill", len(heldAcked))
	}
	heldDup := checkDelivered(t, up, heldAcked, 2*time.Minute)
	cut := 0
	for _, r := range up.all() {
		if r.Cut && heldAcked[r.Header.Get("Hookgate-Event-Id")] {
			cut++
		}
	}
	if cut == 0 {
		t.Fatal("the kill cut off no attempt: the scenario did not happen")
	}
	t.Logf("instance a killed with -9 during %d attempts: all 200 ACKed events delivered by instance b (%d delivered twice)", cut, heldDup)

	// Both instances answer for the whole store through the admin API.
	status, ev := b.admin("GET", "/hookgate/events/"+copyID)
	if status != 200 || ev["id"] != copyID {
		t.Fatalf("instance b does not see the event instance a or b stored: %d %v", status, ev)
	}
	// While the cluster settles after the leader change, a read the store
	// cannot answer is 503, never 500; then it answers.
	waitFor(t, "stats from instance b", 30*time.Second, func() bool {
		status, body := b.admin("GET", "/hookgate/stats")
		if status != http.StatusOK && status != http.StatusServiceUnavailable {
			t.Fatalf("stats: %d %v", status, body)
		}
		return status == http.StatusOK
	})
}

// TestMigrateFromBolt moves the pending events and learned secrets of a
// stopped bbolt gateway into JetStream with `hookgate migrate`; a gateway on
// JetStream delivers them with their ids and bodies, still recognises a
// provider's retry, and verifies with the learned secret.
func TestMigrateFromBolt(t *testing.T) {
	nodes := natsCluster(t, 1)
	upstreamAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	passthrough := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, routesFor(upstreamAddr)+asanaSource("legacy"), passthrough.addr)
	g := startGateway(t, dir, port, admin)
	acked := g.ackGitHubEvents(t, "migrate", 20)
	const asanaSecret = "asana-migrated-secret-0123"
	if s := g.asanaHandshake(asanaSecret); s != 200 {
		t.Fatalf("asana handshake: %d", s)
	}
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	g.kill()

	// The same upstream names as the bbolt gateway's: deliveries name them.
	routes := strings.NewReplacer("  app:\n", "  legacy:\n", "[app]", "[legacy]").Replace(sharedRoutes(clientURLs(nodes), 1, upstreamAddr)) + asanaSource("legacy")
	routesFile := filepath.Join(t.TempDir(), "routes.yaml")
	writeFile(t, routesFile, routes)
	migrate := func() string {
		out, err := exec.Command(binary, "migrate", "--store", filepath.Join(dir, "data", "hookgate.db"), "--config", routesFile).CombinedOutput()
		if err != nil {
			t.Fatalf("migrate: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := migrate(); !strings.Contains(out, "migrated 20 events with 20 pending deliveries") || !strings.Contains(out, "carried 1 learned secrets (0 already there)") {
		t.Fatalf("first run: %s", out)
	}
	if out := migrate(); !strings.Contains(out, "migrated 0 events with 0 pending deliveries") || !strings.Contains(out, "(20 already there)") ||
		!strings.Contains(out, "carried 0 learned secrets (1 already there)") {
		t.Fatalf("second run: %s", out)
	}

	up := newRecorder(t, upstreamAddr, nil)
	js := startSharedGateway(t, routes, passthrough.addr)
	waitFor(t, "every migrated event delivered", 60*time.Second, func() bool { return len(up.byEvent()) >= len(acked) })
	for id, reqs := range up.byEvent() {
		if want, ok := acked[id]; !ok || len(reqs) != 1 || string(reqs[0].Body) != string(want) {
			t.Fatalf("event %s: known %v, %d deliveries", id, ok, len(reqs))
		}
	}
	body := []byte(`{"action":"opened","number":3}`)
	h := github.sign(t, body, "")
	h.Set("X-GitHub-Delivery", "migrate-3")
	if status, hdr, _ := js.post("/webhooks/github", h, body); status != 200 || hdr.Get("Hookgate-Duplicate") != "true" {
		t.Fatalf("a retry after the move was not recognised: %d %v", status, hdr)
	}
	// The learned secret came along: it verifies, and nobody can plant another.
	if status, _, _ := js.post("/webhooks/asana", asanaSigned(asanaSecret), asanaEvent); status != 200 {
		t.Fatalf("asana event after the move: %d", status)
	}
	if s := js.asanaHandshake("asana-attacker"); s != 403 {
		t.Fatalf("asana handshake after the move: %d", s)
	}
}

// TestClusterExampleValidates checks the routes file of examples/cluster.
func TestClusterExampleValidates(t *testing.T) {
	cmd := exec.Command(binary, "validate-routes", filepath.Join(repoRoot(), "examples", "cluster", "routes.yaml"))
	cmd.Env = append(os.Environ(), "GITHUB_WEBHOOK_SECRET=demo-github-secret")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "valid: 1 sources") {
		t.Fatalf("validate-routes: %v\n%s", err, out)
	}
}

// TestClusterExampleFlushesEveryWrite checks that the example cluster's NATS
// servers load and flush each write before acknowledging it, so the example
// keeps an ACKed event through a power loss as the bbolt store does.
func TestClusterExampleFlushesEveryWrite(t *testing.T) {
	for i := 1; i <= 3; i++ {
		file := filepath.Join(repoRoot(), "examples", "cluster", fmt.Sprintf("nats-%d.conf", i))
		opts, err := server.ProcessConfigFile(file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if !opts.SyncAlways || !opts.JetStream {
			t.Errorf("%s: jetstream %v, sync_interval always %v", file, opts.JetStream, opts.SyncAlways)
		}
	}
}
