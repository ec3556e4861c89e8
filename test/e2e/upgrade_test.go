package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStoreFromPreviousVersion starts the gateway on a store file written
// by the version before the body log (internal/store/bolt/testdata/v1.db:
// 60 Stripe events to two upstreams, 40 delivered to app, 5 dead at
// audit, transformed bodies, ordered deliveries): it upgrades the file at
// open, delivers the 75 deliveries still pending with their original
// bodies, and takes new events.
func TestStoreFromPreviousVersion(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf(`
upstreams:
  app:
    url: http://%[1]s
    retry: {initial_interval: 50ms, max_interval: 200ms}
  audit:
    url: http://%[1]s
    retry: {initial_interval: 50ms, max_interval: 200ms}
sources:
  stripe:
    path: /webhooks/stripe
    provider: stripe
    secrets: [whsec_e2e_secret]
    default: [app, audit]
`, up.addr)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	fixture, err := os.ReadFile(filepath.Join(repoRoot(), "internal", "store", "bolt", "testdata", "v1.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "data", "hookgate.db"), string(fixture))

	g := startGateway(t, dir, port, admin)
	waitFor(t, "the 75 pending deliveries", 60*time.Second, func() bool { return countAnswered(up) >= 75 })
	if !strings.Contains(g.log.String(), "upgraded store") {
		t.Fatalf("no upgrade logged:\n%s", g.log.String())
	}
	bodies := map[string]bool{}
	for _, req := range up.all() {
		bodies[string(req.Body)] = true
	}
	for i := range 60 {
		if want := fmt.Sprintf(`{"id":"evt_%d","pad":"%0200d","bin":"\u0000"}`, i, i); i >= 40 && !bodies[want] {
			t.Errorf("event %d's body was not delivered as stored", i)
		}
		if want := fmt.Sprintf(`{"transformed":%d}`, i); i%10 == 3 && i >= 5 && !bodies[want] { // audit deliveries 0-4 are dead
			t.Errorf("event %d's transformed body was not delivered", i)
		}
	}
	if n := countAnswered(up); n != 75 {
		t.Errorf("%d deliveries, want the 75 pending in the old file", n)
	}

	// The upgraded store takes new events, and its old dedup keys still hold.
	stripe := newSigner(t, "stripe", "whsec_e2e_secret")
	body := []byte(`{"id":"evt_after_upgrade","object":"event"}`)
	if status, _, resp := g.post("/webhooks/stripe", stripe.sign(t, body, ""), body); status != 200 {
		t.Fatalf("new event: %d %s", status, resp)
	}
	waitFor(t, "the new event", 30*time.Second, func() bool { return countAnswered(up) >= 77 })
	if _, err := os.Stat(filepath.Join(dir, "data", "hookgate.db.bodies")); err != nil {
		t.Fatalf("no body log beside the upgraded file: %v", err)
	}
}

func countAnswered(r *recorder) int {
	n := 0
	for _, req := range r.all() {
		if req.Answered {
			n++
		}
	}
	return n
}

// TestCompactKeepsBodies: `hookgate compact` on a stopped gateway's store
// leaves every pending event deliverable with its body, and the store's
// body log in place.
func TestCompactKeepsBodies(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	held := strings.Replace(routesFor(up.addr), "    timeout: 5s\n", "    timeout: 5s\n    rate: 1/h\n    burst: 1\n", 1)
	dir, port, admin := newGatewayDir(t, held, passthrough.addr)
	g := startGateway(t, dir, port, admin)
	sent := g.ackGitHubEvents(t, "compact-", 40)
	g.kill()
	store := filepath.Join(dir, "data", "hookgate.db")
	out, err := runBinary(t, "hookgate", "compact", "--store", store)
	if err != nil || !strings.Contains(out, "compacted") {
		t.Fatalf("compact: %v\n%s", err, out)
	}
	if _, err := os.Stat(store + ".compact.bodies"); !os.IsNotExist(err) {
		t.Fatalf("compact left its copy's body log behind: %v", err)
	}
	writeFile(t, filepath.Join(dir, "routes.yaml"), routesFor(up.addr))
	startGateway(t, dir, port, admin)
	waitFor(t, "every event after compaction", 30*time.Second, func() bool { return len(up.byEvent()) >= 40 })
	got := map[string]bool{}
	for _, req := range up.all() {
		got[string(req.Body)] = true
	}
	for id, body := range sent {
		if !got[string(body)] {
			t.Fatalf("event %s was not delivered with its body after compaction", id)
		}
	}
}
