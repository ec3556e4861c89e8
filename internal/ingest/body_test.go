package ingest_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/ingest"
)

// stalledRequest declares a large body, sends sent bytes and then waits,
// as a slow attacker does, on a connection of its own (port); closing the
// returned writer ends it.
func stalledRequest(declared int64, sent []byte, port int) (*http.Request, *io.PipeWriter) {
	pr, pw := io.Pipe()
	req := httptest.NewRequest(http.MethodPost, "/webhooks/github", pr)
	req.ContentLength = declared
	req.RemoteAddr = fmt.Sprintf("192.0.2.1:%d", port)
	req.Header.Set("Content-Type", "application/json")
	go pw.Write(sent)
	return req, pw
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// serveAsync serves req in the background and sends its status on done.
func serveAsync(h *harness, req *http.Request, done chan<- int) {
	go func() {
		rec := httptest.NewRecorder()
		h.p.ServeHTTP(rec, req)
		done <- rec.Code
	}()
}

// A declared Content-Length reserves nothing: a request is charged only
// for what arrived beyond its first small chunk.
func TestStalledBodyHoldsOnlyWhatArrived(t *testing.T) {
	h := newHarness(t)
	h.p.SetMaxBody(8 << 20)
	const stalled = 50
	var writers []*io.PipeWriter
	done := make(chan int, stalled)
	for i := range stalled {
		req, pw := stalledRequest(5<<20, []byte(`{"zen":`), 1000+i)
		writers = append(writers, pw)
		serveAsync(h, req, done)
	}
	waitUntil(t, "every request reading", func() bool { return h.p.Unfinished() == stalled })
	if used := h.p.Bodies().Used(); used != 0 {
		t.Fatalf("%d stalled requests declaring 5 MiB, each 7 bytes in, hold %d bytes of the budget, want 0", stalled, used)
	}
	for _, pw := range writers {
		pw.CloseWithError(errors.New("client went away"))
	}
	for range stalled {
		<-done
	}
	if used, n := h.p.Bodies().Used(), h.p.Unfinished(); used != 0 || n != 0 {
		t.Fatalf("%d bytes still reserved, %d requests unfinished after the requests ended", used, n)
	}
}

// Once the budget is spent, further requests get 503 with Retry-After, and
// the budget comes back when the holders finish.
func TestBodyBudgetRefusesPastTheCap(t *testing.T) {
	h := newHarness(t)
	h.p.SetMaxBody(8 << 20)
	h.p.SetBodies(ingest.NewBodyBudget(2 * ingest.FirstChunk))
	var writers []*io.PipeWriter
	done := make(chan int, 2)
	for i := range 2 {
		req, pw := stalledRequest(1<<20, bytes.Repeat([]byte(" "), ingest.FirstChunk+1), 2000+i)
		writers = append(writers, pw)
		serveAsync(h, req, done)
	}
	waitUntil(t, "both requests reading", func() bool { return h.p.Bodies().Used() == 2*ingest.FirstChunk })
	body := []byte(`{"zen":"third","pad":"` + strings.Repeat("x", 2*ingest.FirstChunk) + `"}`)
	hdr := sign(t, "github", "gh-secret-0123456789", body)
	hdr.Set("X-GitHub-Delivery", "budget-3")
	rec := h.send("/webhooks/github", hdr, body)
	if rec.Code != 503 || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("third request: %d %v, want 503 with Retry-After", rec.Code, rec.Header())
	}
	for _, pw := range writers {
		pw.CloseWithError(errors.New("client went away"))
	}
	<-done
	<-done
	if rec := h.send("/webhooks/github", hdr, body); rec.Code != 200 {
		t.Fatalf("after the budget came back: %d %s", rec.Code, rec.Body)
	}
	if used := h.p.Bodies().Used(); used != 0 {
		t.Fatalf("%d bytes still reserved", used)
	}
}

// One client, and one connection, may hold only so many unfinished
// requests; past that it gets 503 at once, and others are still served.
func TestUnfinishedBodiesPerClientAndConnection(t *testing.T) {
	h := newHarness(t)
	h.p.SetMaxBody(8 << 20)
	var writers []*io.PipeWriter
	defer func() {
		for _, pw := range writers {
			pw.CloseWithError(errors.New("client went away"))
		}
	}()
	done := make(chan int, 1000)
	// One connection: streams past the per-connection cap are refused.
	for range ingest.DefaultUnfinishedPerConnection {
		req, pw := stalledRequest(1<<20, nil, 4000)
		writers = append(writers, pw)
		serveAsync(h, req, done)
	}
	waitUntil(t, "the connection's requests reading", func() bool { return h.p.Unfinished() == ingest.DefaultUnfinishedPerConnection })
	req, pw := stalledRequest(1<<20, nil, 4000)
	writers = append(writers, pw)
	rec := httptest.NewRecorder()
	h.p.ServeHTTP(rec, req)
	if rec.Code != 503 || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("a stream past the connection's cap: %d, want 503 with Retry-After", rec.Code)
	}
	// The same client on other connections, up to its own cap.
	for i := ingest.DefaultUnfinishedPerConnection; i < ingest.DefaultUnfinishedPerClient; i++ {
		req, pw := stalledRequest(1<<20, nil, 5000+i)
		writers = append(writers, pw)
		serveAsync(h, req, done)
	}
	waitUntil(t, "the client's requests reading", func() bool { return h.p.Unfinished() == ingest.DefaultUnfinishedPerClient })
	req, pw = stalledRequest(1<<20, nil, 6000)
	writers = append(writers, pw)
	rec = httptest.NewRecorder()
	h.p.ServeHTTP(rec, req)
	if rec.Code != 503 {
		t.Fatalf("a request past the client's cap: %d, want 503", rec.Code)
	}
	// Another client is served meanwhile.
	body := []byte(`{"zen":"other client"}`)
	hdr := sign(t, "github", "gh-secret-0123456789", body)
	hdr.Set("X-GitHub-Delivery", "other-client")
	other := httptest.NewRequest(http.MethodPost, "/webhooks/github", bytes.NewReader(body))
	other.RemoteAddr = "198.51.100.7:443"
	for k, v := range hdr {
		other.Header[k] = v
	}
	rec = httptest.NewRecorder()
	h.p.ServeHTTP(rec, other)
	if rec.Code != 200 {
		t.Fatalf("another client: %d %s", rec.Code, rec.Body)
	}
}

// Bodies of every size and framing arrive whole, charged only past the
// first chunk.
func TestReadBodyWhole(t *testing.T) {
	for _, size := range []int{0, 1, ingest.FirstChunk - 1, ingest.FirstChunk, ingest.FirstChunk + 1, 3*ingest.FirstChunk + 7, 1 << 20} {
		want := bytes.Repeat([]byte("x"), size)
		for _, declared := range []int64{int64(size), -1} {
			b := ingest.NewBodyBudget(8 << 20)
			got, reserved, err := ingest.ReadBody(iotestHalf(bytes.NewReader(want)), declared, b, nil)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("size %d declared %d: %v, %d bytes", size, declared, err, len(got))
			}
			if size <= ingest.FirstChunk && reserved != 0 && declared > 0 {
				t.Fatalf("size %d declared: reserved %d, want 0", size, reserved)
			}
			if reserved < int64(size-ingest.FirstChunk) || reserved > 2*int64(size) {
				t.Fatalf("size %d declared %d: reserved %d", size, declared, reserved)
			}
		}
	}
	big := strings.Repeat("x", 3*ingest.FirstChunk)
	if _, _, err := ingest.ReadBody(strings.NewReader(big), int64(len(big)), ingest.NewBodyBudget(ingest.FirstChunk/2), nil); !errors.Is(err, ingest.ErrBodyBudget) {
		t.Fatalf("over the budget: %v", err)
	}
}

// iotestHalf returns at most half of what each Read asks for, as a network does.
func iotestHalf(r io.Reader) io.Reader { return halfReader{r} }

type halfReader struct{ r io.Reader }

func (h halfReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:len(p)/2]
	}
	return h.r.Read(p)
}

// An IPv6 client is counted by its /64: one host can fill its prefix with
// addresses of its own.
func TestClientKey(t *testing.T) {
	for ip, want := range map[string]string{
		"2001:db8:1:2:aaaa::1": "2001:db8:1:2::/64", "2001:db8:1:2:bbbb::7": "2001:db8:1:2::/64",
		"192.0.2.7": "192.0.2.7", "::ffff:192.0.2.7": "::ffff:192.0.2.7", "not an address": "not an address",
	} {
		if got := ingest.ClientKey(ip); got != want {
			t.Errorf("%s: %q, want %q", ip, got, want)
		}
	}
}
