package ingest_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/ingest"
)

// stalledRequest declares a large body, sends a few bytes and then waits, as
// a slow attacker does; closing the returned writer ends it.
func stalledRequest(declared int64) (*http.Request, *io.PipeWriter) {
	pr, pw := io.Pipe()
	req := httptest.NewRequest(http.MethodPost, "/webhooks/github", pr)
	req.ContentLength = declared
	req.Header.Set("Content-Type", "application/json")
	go pw.Write([]byte(`{"zen":`))
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

// A declared Content-Length reserves nothing until the bytes arrive.
func TestStalledBodyHoldsOnlyWhatArrived(t *testing.T) {
	h := newHarness(t)
	h.p.SetMaxBody(8 << 20)
	const stalled = 50
	var writers []*io.PipeWriter
	done := make(chan int, stalled)
	for range stalled {
		req, pw := stalledRequest(5 << 20)
		writers = append(writers, pw)
		go func() {
			rec := httptest.NewRecorder()
			h.p.ServeHTTP(rec, req)
			done <- rec.Code
		}()
	}
	waitUntil(t, "every request reading", func() bool { return h.p.Bodies().Used() >= stalled*ingest.FirstChunk })
	if used := h.p.Bodies().Used(); used > stalled*ingest.FirstChunk {
		t.Fatalf("%d stalled requests declaring 5 MiB hold %d bytes, want at most %d", stalled, used, stalled*ingest.FirstChunk)
	}
	for _, pw := range writers {
		pw.CloseWithError(errors.New("client went away"))
	}
	for range stalled {
		<-done
	}
	if used := h.p.Bodies().Used(); used != 0 {
		t.Fatalf("%d bytes still reserved after the requests ended", used)
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
	for range 2 {
		req, pw := stalledRequest(1 << 20)
		writers = append(writers, pw)
		go func() {
			rec := httptest.NewRecorder()
			h.p.ServeHTTP(rec, req)
			done <- rec.Code
		}()
	}
	waitUntil(t, "both requests reading", func() bool { return h.p.Bodies().Used() == 2*ingest.FirstChunk })
	body := []byte(`{"zen":"third"}`)
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

// Bodies of every size and framing arrive whole.
func TestReadBodyWhole(t *testing.T) {
	for _, size := range []int{0, 1, ingest.FirstChunk - 1, ingest.FirstChunk, ingest.FirstChunk + 1, 3*ingest.FirstChunk + 7, 1 << 20} {
		want := bytes.Repeat([]byte("x"), size)
		for _, declared := range []int64{int64(size), -1} {
			b := ingest.NewBodyBudget(8 << 20)
			got, reserved, err := ingest.ReadBody(iotestHalf(bytes.NewReader(want)), declared, b)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("size %d declared %d: %v, %d bytes", size, declared, err, len(got))
			}
			if reserved < int64(size) || reserved > 2*int64(max(size, ingest.FirstChunk)) {
				t.Fatalf("size %d declared %d: reserved %d", size, declared, reserved)
			}
			if declared > 0 && reserved != max(int64(size), 0) && size < ingest.FirstChunk {
				t.Fatalf("size %d declared: reserved %d, want exactly the body", size, reserved)
			}
		}
	}
	if _, _, err := ingest.ReadBody(strings.NewReader("abc"), 3, ingest.NewBodyBudget(2)); !errors.Is(err, ingest.ErrBodyBudget) {
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
