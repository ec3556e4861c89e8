package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestDiskFull puts the store on a 2 MiB tmpfs and holds the gateway to what
// it promises on a full disk (docs/security.md, "Losing acknowledged events"):
// every event is either fsynced and answered 2xx, or answered 503 with
// Retry-After so that the provider sends it again; never a 2xx without the
// write. It does not promise that once one write failed every later one fails
// too: a commit that did not fit is rolled back, and a smaller one may still
// fit in the pages that are left, so 200 and 503 alternate near the limit.
//
// Four senders post events of mixed sizes at once (so refused and accepted
// writes share group commits) until the disk is full and well past it, and
// every answer must be 200 with an event id or 503 with Retry-After. While the
// disk is full the admin API still answers. When space returns, the
// provider's retry of every refused event is accepted. After a restart every
// event that got a 200 is in the store and is delivered, byte for byte.
//
// Mounting the tmpfs needs root, as CI and scripts/test.sh run it.
func TestDiskFull(t *testing.T) {
	passthrough := newRecorder(t, "", nil)
	upstream := newRecorder(t, "", nil)
	alerts := newRecorder(t, "", nil)
	// While the disk fills, the upstream is unreachable and attempts are rare,
	// so deliveries stay pending and the store's writes are the events'.
	// GitHub never retries and the source does not reconcile: a 503 to it
	// raises a missed alert.
	routes := func(url, rate string) string {
		return "upstreams:\n  sink:\n    url: " + url + "\n" + rate +
			"    retry: {max_attempts: 1000, initial_interval: 1s, max_interval: 1s}\n" +
			"sources:\n  github:\n    path: /webhooks/github\n    provider: github\n" +
			"    secrets: [gh-e2e-secret-0123456789]\n    default: [sink]\n" +
			"alerts:\n  - name: ops\n    to: http://" + alerts.addr + "/alerts\n    on: {missed: true, store_unavailable: true}\n"
	}
	dir, port, admin := newGatewayDir(t, routes("http://127.0.0.1:1", "    rate: 1/h\n"), passthrough.addr)
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o700)
	// An empty store takes about 1.3 MiB (the zeros written ahead in the
	// body log and in the write-ahead log): 3 MiB leaves room for some
	// events.
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", data).CombinedOutput(); err != nil {
		t.Fatalf("mounting a small tmpfs for the store (needs root; scripts/test.sh runs as root in CI): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", data).Run() })
	g := startGateway(t, dir, port, admin)
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")

	// Event n has a fixed body, so a retry of it is the same event.
	rng := rand.New(rand.NewPCG(15, 15))
	sizes := []int{100, 1500, 6000, 20000}
	bodies := map[int][]byte{}
	body := func(n int) []byte {
		if b, ok := bodies[n]; ok {
			return b
		}
		b := []byte(fmt.Sprintf(`{"n":%d,"pad":%q}`, n, strings.Repeat("x", sizes[rng.IntN(len(sizes))])))
		bodies[n] = b
		return b
	}
	type answer struct {
		n          int
		status     int
		id, retry  string
		duplicate  bool
		err        error
		respBody   string
		bodyLength int
	}
	// send posts the events in ns at once and returns the answers in order.
	// It signs in the test's goroutine; the goroutines only do HTTP.
	send := func(ns ...int) []answer {
		out := make([]answer, len(ns))
		var wg sync.WaitGroup
		for i, n := range ns {
			b := body(n)
			h := github.sign(t, b, "")
			h.Set("X-GitHub-Delivery", fmt.Sprint("full-", n))
			h.Set("Content-Type", "application/json")
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := answer{n: n, bodyLength: len(b)}
				req, _ := http.NewRequest(http.MethodPost, g.url("/webhooks/github"), bytes.NewReader(b))
				req.Header = h
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					a.err = err
					out[i] = a
					return
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				a.status, a.respBody = resp.StatusCode, string(raw)
				a.id, a.retry = resp.Header.Get("Hookgate-Event-Id"), resp.Header.Get("Retry-After")
				a.duplicate = resp.Header.Get("Hookgate-Duplicate") == "true"
				out[i] = a
			}()
		}
		wg.Wait()
		return out
	}

	acked := map[string]int{} // event id → n
	var refused []int
	var firstRefused time.Time
	ackedBeforeFull, ackedAfterFull := 0, 0
	const senders, pastFull, maxEvents = 4, 150, 4000
	n := 0
	for len(refused) < pastFull {
		if n >= maxEvents {
			missing := 0
			for id := range acked {
				if status, _ := g.admin("GET", "/hookgate/events/"+id); status != 200 {
					missing++
				}
			}
			t.Fatalf("the disk never filled: %d events sent, %d ACKed (%d of them not in the store), %d refused", n, len(acked), missing, len(refused))
		}
		ns := make([]int, senders)
		for i := range ns {
			ns[i] = n
			n++
		}
		for _, a := range send(ns...) {
			switch {
			case a.err != nil:
				t.Fatalf("event %d: %v (the gateway must keep serving on a full disk)", a.n, a.err)
			case a.status == 200 && a.id != "" && !a.duplicate:
				acked[a.id] = a.n
				if len(refused) == 0 {
					ackedBeforeFull++
				} else {
					ackedAfterFull++
				}
			case a.status == 503 && a.retry != "":
				if len(refused) == 0 {
					firstRefused = time.Now()
				}
				refused = append(refused, a.n)
			default:
				t.Fatalf("event %d (%d bytes): %d, Retry-After %q, id %q, duplicate %v, %q: on a full disk the answer is 200 for a stored event or 503 with Retry-After",
					a.n, a.bodyLength, a.status, a.retry, a.id, a.duplicate, a.respBody)
			}
		}
	}
	if ackedBeforeFull == 0 {
		t.Fatal("no event was ACKed before the disk filled")
	}
	// Full: the gateway keeps running and its admin API answers.
	if status, stats := g.admin("GET", "/hookgate/stats"); status != 200 || stats == nil {
		t.Fatalf("admin stats on a full disk: %d", status)
	}
	// The store_unavailable alert reaches its target while the disk is
	// still full: it is sent directly, not written first.
	// Firing alerts by kind: a resolved store_unavailable may follow once
	// the store has taken events for 30 s, which a slow run can reach.
	kinds := func() map[string]int {
		out := map[string]int{}
		for _, r := range alerts.all() {
			var a struct{ Alert, State string }
			json.Unmarshal(r.Body, &a)
			if a.State == "firing" {
				out[a.Alert]++
			}
		}
		return out
	}
	waitFor(t, "the store_unavailable alert on a full disk", 30*time.Second, func() bool { return kinds()["store_unavailable"] >= 1 })
	alertAfter := time.Since(firstRefused)
	for _, r := range alerts.all() {
		if strings.Contains(string(r.Body), `"alert":"store_unavailable","state":"firing"`) && !strings.Contains(string(r.Body), "hookgate.db is unavailable") {
			t.Fatalf("the alert does not name the store: %s", r.Body)
		}
	}

	// Space returns: the provider's retries of the refused events are
	// accepted (a duplicate answer would mean a refused event was stored,
	// which the promise allows; it is counted, not failed).
	if out, err := exec.Command("mount", "-o", "remount,size=64m", data).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	// The missed alert, raised at the first 503 while no write fitted, is
	// written and sent once the store takes writes again.
	waitFor(t, "the missed alert", 30*time.Second, func() bool { return kinds()["missed"] >= 1 })
	for _, r := range alerts.all() {
		var missed struct{ Alert, Source, Message string }
		if json.Unmarshal(r.Body, &missed); missed.Alert == "missed" && (missed.Source != "github" ||
			!strings.Contains(missed.Message, "does not retry") || !strings.Contains(missed.Message, "set reconcile on source github")) {
			t.Fatalf("missed alert %s", r.Body)
		}
	}
	duplicates := 0
	for i := 0; i < len(refused); i += senders {
		for _, a := range send(refused[i:min(i+senders, len(refused))]...) {
			if a.err != nil || a.status != 200 || a.id == "" {
				t.Fatalf("retry of refused event %d after space returned: %d %v %q", a.n, a.status, a.err, a.respBody)
			}
			if a.duplicate {
				duplicates++
			}
			acked[a.id] = a.n
		}
	}

	// Restart on the roomy disk with a reachable upstream: every event that
	// got a 200 is there and is delivered with its exact body.
	g.kill()
	writeFile(t, filepath.Join(dir, "routes.yaml"), routes("http://"+upstream.addr, ""))
	g2 := startGateway(t, dir, port, admin)
	for id, n := range acked {
		if status, ev := g2.admin("GET", "/hookgate/events/"+id); status != 200 || ev["id"] != id {
			t.Fatalf("ACKed event %s (event %d) missing after the disk filled: %d", id, n, status)
		}
	}
	waitFor(t, "every ACKed event delivered", 2*time.Minute, func() bool {
		return len(upstream.byEvent()) >= len(acked)
	})
	delivered := upstream.byEvent()
	for id, n := range acked {
		reqs := delivered[id]
		if len(reqs) == 0 {
			t.Fatalf("ACKed event %s (event %d) was not delivered; delivered: %d events", id, n, len(delivered))
		}
		if !bytes.Equal(reqs[0].Body, bodies[n]) {
			t.Fatalf("event %d delivered with another body", n)
		}
	}
	if k := kinds(); k["missed"] != 1 || k["store_unavailable"] != 1 {
		t.Fatalf("firing alerts by kind %v, want one missed and one store_unavailable (repeat 1h)", k)
	}
	t.Logf("the store_unavailable alert reached its target at most %s after the first 503, with the disk still full", alertAfter.Round(time.Millisecond))
	t.Logf("%d events sent: %d ACKed before the first 503, %d ACKed between 503s (smaller writes that still fit), %d answered 503 with Retry-After; "+
		"after space returned their retries were accepted (%d as duplicates); after a restart all %d ACKed events were present and delivered",
		n, ackedBeforeFull, ackedAfterFull, len(refused), duplicates, len(acked))
}

// TestMaxSizeRefusesBeforeTheDiskFills: with storage.max_size below the
// room on a 16 MiB tmpfs, a flood of events is answered 503 with
// Retry-After once the store reaches its cap, the file system never
// fills, and every event answered 200 is in the store.
func TestMaxSizeRefusesBeforeTheDiskFills(t *testing.T) {
	passthrough := newRecorder(t, "", nil)
	routes := "storage:\n  max_size: 4MiB\nupstreams:\n  sink:\n    url: http://127.0.0.1:1\n    rate: 1/h\n" +
		"sources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [gh-e2e-secret-0123456789]\n    default: [sink]\n"
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o700)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", data).CombinedOutput(); err != nil {
		t.Fatalf("mounting a tmpfs for the store (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", data).Run() })
	g := startGateway(t, dir, port, admin)
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	acked := map[string]bool{}
	refused := 0
	pad := strings.Repeat("x", 16<<10)
	for n := 0; refused < 50; n++ {
		if n == 3000 {
			t.Fatalf("no 503 after %d events (%d ACKed)", n, len(acked))
		}
		body := []byte(fmt.Sprintf(`{"n":%d,"pad":%q}`, n, pad))
		h := github.sign(t, body, "")
		h.Set("X-GitHub-Delivery", fmt.Sprint("cap-", n))
		status, hdr, resp := g.post("/webhooks/github", h, body)
		switch {
		case status == 200:
			acked[hdr.Get("Hookgate-Event-Id")] = true
		case status == 503 && hdr.Get("Retry-After") != "":
			refused++
		default:
			t.Fatalf("event %d: %d %q", n, status, resp)
		}
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(data, &fs); err != nil {
		t.Fatal(err)
	}
	free := int64(fs.Bavail) * int64(fs.Bsize)
	if free < 8<<20 {
		t.Fatalf("the tmpfs has %d bytes left: the cap let the store grow toward the disk's end", free)
	}
	for id := range acked {
		if status, _ := g.admin("GET", "/hookgate/events/"+id); status != 200 {
			t.Fatalf("ACKed event %s is not in the store", id)
		}
	}
	_, metrics := g.adminRaw("GET", "/metrics")
	if !strings.Contains(metrics, `caddy_hookgate_requests_total{outcome="unavailable",source="github"} 50`) {
		t.Fatalf("the 503s are not counted as unavailable:\n%s", grepLines(metrics, "unavailable"))
	}
	t.Logf("max_size 4 MiB on a 16 MiB tmpfs: %d events ACKed (16 KiB each), then 503 with Retry-After; %d MiB of the file system left", len(acked), free>>20)
}

func grepLines(text, word string) string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.Contains(line, word) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
