package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// loadSender posts unique GitHub-signed events and remembers the ACKed ids.
type loadSender struct {
	t      *testing.T
	signer signer
	next   atomic.Int64
	mu     sync.Mutex
	acked  map[string]bool
	errors atomic.Int64
	// retries counts connection errors retried, as providers retry them.
	retries  atomic.Int64
	statuses sync.Map // status code -> *atomic.Int64, for non-200 answers
	client   *http.Client
	// retryUnavailable retries 503 answers too, as providers retry them.
	retryUnavailable bool
	// prefix keeps delivery ids unique across the senders of one run.
	prefix string
	// onACK, if set, is told of every ACKed event, to send it again later.
	onACK func(eventID, deliveryID string, body []byte)
}

var senders atomic.Int64

var errRetryLater = errors.New("503: retry later")

func newLoadSender(t *testing.T) *loadSender {
	return &loadSender{t: t, signer: newSigner(t, "github", "gh-e2e-secret-0123456789"), acked: map[string]bool{}, prefix: fmt.Sprintf("load%d-", senders.Add(1)),
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

// send posts one event to base, retrying connection errors a few times as a
// provider would; failures are counted, never fatal: during crashes some
// requests fail, and only ACKs count.
func (s *loadSender) send(base string, attempts int) {
	n := s.next.Add(1)
	// Each sender's bodies differ from every other's, as genuine events do:
	// byte-identical GitHub bodies are one event (the replay digest).
	body := []byte(`{"action":"opened","number":` + strconv.FormatInt(n, 10) + `,"sender":"` + s.prefix + `","pad":"` + string(bytes.Repeat([]byte("x"), 512)) + `"}`)
	h := s.signer.sign(s.t, body, "")
	deliveryID := s.prefix + strconv.FormatInt(n, 10)
	h.Set("X-GitHub-Delivery", deliveryID)
	h.Set("Content-Type", "application/json")
	var resp *http.Response
	var err error
	for try := range attempts {
		if try > 0 {
			s.retries.Add(1)
			time.Sleep(20 * time.Millisecond)
		}
		req, _ := http.NewRequest(http.MethodPost, base+"/webhooks/github", bytes.NewReader(body))
		req.Header = h
		resp, err = s.client.Do(req)
		if err == nil && s.retryUnavailable && resp.StatusCode == http.StatusServiceUnavailable && try < attempts-1 {
			resp.Body.Close()
			time.Sleep(200 * time.Millisecond)
			err = errRetryLater
			continue
		}
		if err == nil {
			break
		}
	}
	if err != nil {
		s.errors.Add(1)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		counter, _ := s.statuses.LoadOrStore(resp.StatusCode, new(atomic.Int64))
		counter.(*atomic.Int64).Add(1)
		s.errors.Add(1)
		return
	}
	id := resp.Header.Get("Hookgate-Event-Id")
	s.mu.Lock()
	s.acked[id] = true
	s.mu.Unlock()
	if s.onACK != nil {
		s.onACK(id, deliveryID, body)
	}
}

// statusCounts lists the answers other than 200, by status.
func (s *loadSender) statusCounts() string {
	var parts []string
	s.statuses.Range(func(k, v any) bool {
		parts = append(parts, fmt.Sprintf("%v×%d", k, v.(*atomic.Int64).Load()))
		return true
	})
	sort.Strings(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func (s *loadSender) ackedIDs() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]bool, len(s.acked))
	for k := range s.acked {
		out[k] = true
	}
	return out
}

// checkDelivered waits until every ACKed event reached the upstream and
// returns how many were delivered more than once.
func checkDelivered(t *testing.T, up *recorder, acked map[string]bool, idle time.Duration) (duplicates int) {
	t.Helper()
	// A backlog of many cuts' events takes as long as it takes: the check
	// fails when deliveries stop coming for idle, not after a fixed time.
	last, lastAt := -1, time.Now()
	for {
		got := up.byEvent()
		done := 0
		for id := range acked {
			if len(got[id]) > 0 {
				done++
			}
		}
		if done == len(acked) {
			break
		}
		if done > last {
			last, lastAt = done, time.Now()
		} else if time.Since(lastAt) > idle {
			t.Fatalf("%d of %d ACKed events delivered, none more in %s", done, len(acked), idle)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for id, reqs := range up.byEvent() {
		if acked[id] && len(reqs) > 1 {
			duplicates++
		}
	}
	return duplicates
}

// TestReloadUnderLoad sends 5,000 events while the configuration is
// reloaded every 300 ms with a changed upstream: every ACKed event is
// delivered, none twice, and the store is never opened twice.
func TestReloadUnderLoad(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, routesFor(up.addr), passthrough.addr)
	g := startGateway(t, dir, port, admin)
	caddyfile := readFile(t, filepath.Join(dir, "Caddyfile"))
	sender := newLoadSender(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", g.port)

	// At least 5,000 events, at about 2,000/s, and for as long as 6 reloads
	// take: ingest alone is faster than the reloads.
	const atLeast, minReloads = 5000, 6
	var sent atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				sent.Add(1)
				sender.send(base, 5)
				time.Sleep(8 * time.Millisecond) // about 2,000 events/s in all
			}
		}()
	}
	reloads := 0
	for reloads < minReloads || sent.Load() < atLeast {
		time.Sleep(300 * time.Millisecond)
		// A real change each time: the upstream's timeout and concurrency.
		routes := routesFor(up.addr)
		routes = replaceOnce(routes, "timeout: 5s", fmt.Sprintf("timeout: %ds", 5+reloads%3))
		routes = replaceOnce(routes, "concurrency: 8", fmt.Sprintf("concurrency: %d", 4+reloads%5))
		writeFile(t, filepath.Join(dir, "routes.yaml"), routes)
		if status, resp := g.load(caddyfile); status != 200 {
			t.Fatalf("reload %d: %d %s", reloads, status, resp)
		}
		reloads++
	}
	close(stop)
	wg.Wait()
	total := int(sent.Load())
	acked := sender.ackedIDs()
	dups := checkDelivered(t, up, acked, 90*time.Second)
	statuses := map[any]int64{}
	sender.statuses.Range(func(k, v any) bool { statuses[k] = v.(*atomic.Int64).Load(); return true })
	t.Logf("%d events sent, %d ACKed, %d failed (answers %v), %d connection errors retried, %d reloads, %d delivered twice",
		total, len(acked), sender.errors.Load(), statuses, sender.retries.Load(), reloads, dups)
	if len(acked) != total {
		t.Errorf("%d of %d events were not ACKed during reloads", total-len(acked), total)
	}
	if dups != 0 {
		t.Errorf("%d events delivered twice across reloads", dups)
	}
	if bytes.Contains([]byte(g.log.String()), []byte("locked by another process")) {
		t.Error("a reload opened the store a second time")
	}
}

// TestCrashLoop kills the gateway with SIGKILL at random moments under load,
// reloading its configuration every two seconds while it runs, and restarts
// it: no ACKed event is lost. HOOKGATE_SOAK_CRASHES sets the number of
// crashes (default 3); HOOKGATE_SOAK_MINUTES instead keeps crashing until
// that many minutes have passed, each run lasting 1-10 s.
func TestCrashLoop(t *testing.T) {
	crashes, minutes := 3, 0
	for name, dst := range map[string]*int{"HOOKGATE_SOAK_CRASHES": &crashes, "HOOKGATE_SOAK_MINUTES": &minutes} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				t.Fatalf("%s=%q", name, v)
			}
			*dst = n
		}
	}
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, routesFor(up.addr), passthrough.addr)
	caddyfile := readFile(t, filepath.Join(dir, "Caddyfile"))
	sender := newLoadSender(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					sender.send(base, 1)
				}
			}
		}()
	}
	start := time.Now()
	deadline := start.Add(time.Duration(minutes) * time.Minute)
	runFor := func() time.Duration { return time.Duration(300+rand.IntN(1200)) * time.Millisecond }
	if minutes > 0 {
		runFor = func() time.Duration { return time.Duration(1000+rand.IntN(9000)) * time.Millisecond }
	}
	cycles, reloads := 0, 0
	for minutes > 0 && time.Now().Before(deadline) || minutes == 0 && cycles < crashes {
		g := startGateway(t, dir, port, admin)
		end := time.Now().Add(runFor())
		for time.Until(end) > 2*time.Second {
			time.Sleep(2 * time.Second)
			routes := replaceOnce(routesFor(up.addr), "timeout: 5s", fmt.Sprintf("timeout: %ds", 5+reloads%3))
			writeFile(t, filepath.Join(dir, "routes.yaml"), routes)
			if status, resp := g.load(caddyfile); status != 200 {
				t.Fatalf("reload %d: %d %s", reloads, status, resp)
			}
			reloads++
		}
		time.Sleep(time.Until(end))
		g.kill9()
		cycles++
		t.Logf("crash %d: %d ACKed so far, %d reloads", cycles, len(sender.ackedIDs()), reloads)
	}
	startGateway(t, dir, port, admin)
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	acked := sender.ackedIDs()
	dups := checkDelivered(t, up, acked, 120*time.Second)
	t.Logf("%d crashes and %d reloads in %s: %d events ACKed, 0 lost, %d delivered more than once, %d requests refused or failed while down",
		cycles, reloads, time.Since(start).Round(time.Second), len(acked), dups, sender.errors.Load())
}

func replaceOnce(s, old, new string) string {
	i := bytes.Index([]byte(s), []byte(old))
	if i < 0 {
		return s
	}
	return s[:i] + new + s[i+len(old):]
}
