package ingest_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/store/bolt"
)

const rejectionsYAML = `
upstreams:
  legacy:
    url: http://127.0.0.1:1
sources:
  github:
    path: /webhooks/github
    provider: github
    secrets: [gh-secret-0123456789]
    default: [legacy]
  crm:
    path: /webhooks/crm
    verify:
      header: X-Crm-Signature
      content: "{body}"
    secrets: [crm-secret-0123456789]
    default: [legacy]
    rejections:
      keep: 3
      body_bytes: 60
  quiet:
    path: /webhooks/quiet
    provider: github
    secrets: [gh-secret-0123456789]
    default: [legacy]
    rejections:
      keep: 0
`

// rejectionsHarness is a pipeline on a real store file whose refusals go to
// a rejection log kept in that file.
func rejectionsHarness(t *testing.T, path string) (*harness, *ingest.Rejections) {
	t.Helper()
	cfg, err := config.Parse("routes.yaml", []byte(rejectionsYAML), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := bolt.Open(path, bolt.Options{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	r := ingest.NewRejections(st, nil)
	t.Cleanup(func() { r.Close(); st.Close() })
	p.KeepRejections(r)
	p.Attach(st, nil, func() time.Time { return testNow })
	return &harness{p: p, store: st}, r
}

func TestRejectionsAreKeptMaskedAndBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookgate.db")
	h, r := rejectionsHarness(t, path)
	forged := http.Header{"X-Hub-Signature-256": {"sha256=" + strings.Repeat("0", 64)}, "X-Github-Event": {"push"},
		"X-Github-Delivery": {"d-1"}, "Cookie": {"session=secret-session"}, "User-Agent": {"GitHub-Hookshot/abc"}}
	if rec := h.send("/webhooks/github", forged, []byte(`{"zen":"x"}`)); rec.Code != 401 {
		t.Fatalf("forged: %d", rec.Code)
	}
	if rec := h.send("/webhooks/github", nil, []byte(`{}`)); rec.Code != 401 {
		t.Fatalf("unsigned: %d", rec.Code)
	}
	logs, err := r.Recent("github", 10)
	if err != nil {
		t.Fatal(err)
	}
	got := logs["github"].Records
	if len(got) != 2 || got[0].Reason != "missing_signature" || got[1].Reason != "invalid_signature" {
		t.Fatalf("github's rejections, newest first: %+v", got)
	}
	bad := got[1]
	if bad.Status != 401 || bad.Method != "POST" || bad.Path != "/webhooks/github" || bad.ClientIP == "" || !bad.At.Equal(testNow) || bad.Body != "" {
		t.Fatalf("the bad signature's record: %+v", bad)
	}
	// What says what the request was stays; the signature and the cookie
	// are only their length.
	want := map[string]string{"X-Github-Event": "push", "User-Agent": "GitHub-Hookshot/abc", "X-Hub-Signature-256": "[71 bytes]",
		"Cookie": "[22 bytes]", "X-Github-Delivery": "[3 bytes]", "Content-Type": "application/json"}
	for name, v := range want {
		if bad.Header.Get(name) != v {
			t.Errorf("header %s kept as %q, want %q", name, bad.Header.Get(name), v)
		}
	}

	// keep bounds the log; body_bytes keeps the start of the body, masked.
	for i := range 5 {
		body := `{"n":` + string(rune('0'+i)) + `,"email":"jane@example.com","note":"` + strings.Repeat("x", 100) + `"}`
		if rec := h.send("/webhooks/crm", http.Header{"X-Crm-Signature": {"00"}}, []byte(body)); rec.Code != 401 {
			t.Fatalf("crm: %d", rec.Code)
		}
	}
	logs, _ = r.Recent("crm", 10)
	crm := logs["crm"].Records
	if len(crm) != 3 || !strings.Contains(crm[0].Body, `"n":4`) || !strings.Contains(crm[2].Body, `"n":2`) {
		t.Fatalf("crm keeps the newest 3: %+v", crm)
	}
	for _, rec := range crm {
		if strings.Contains(rec.Body, "jane@") || !strings.HasSuffix(rec.Body, "…") || len(rec.Body) > 60+len("…") {
			t.Fatalf("a kept body is masked and cut to 60 bytes: %q", rec.Body)
		}
	}
	// keep: 0 keeps nothing.
	h.send("/webhooks/quiet", nil, []byte(`{}`))
	if logs, _ = r.Recent("", 10); len(logs["quiet"].Records) != 0 || len(logs) != 2 {
		t.Fatalf("every source's logs: %v", logs)
	}

	// A flood is rate-limited: the log takes a burst of 20 a source (the
	// clock stands still here, so nothing refills it), counts the rest, and
	// the store sees no write on the request path.
	before := h.store.Commits()
	for range 5000 {
		h.send("/webhooks/github", forged, []byte(`{}`))
	}
	if during := h.store.Commits() - before; during > 2 { // the background flush runs every 2 s
		t.Fatalf("5,000 refusals made %d commits", during)
	}
	logs, _ = r.Recent("github", 1000)
	if n, dropped := len(logs["github"].Records), logs["github"].Dropped; n != 20 || dropped != 5000-18 {
		t.Fatalf("after the flood: %d kept, %d dropped; want the burst of 20 (2 before the flood) and 4,982", n, dropped)
	}

	// The logs are in the file: a restart carries on with them.
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	h.store.Close()
	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	again := ingest.NewRejections(st, nil)
	defer again.Close()
	logs, err = again.Recent("", 1000)
	if err != nil || len(logs["github"].Records) != 20 || len(logs["crm"].Records) != 3 || logs["github"].Dropped != 4982 {
		t.Fatalf("after a restart: %v %v", logs, err)
	}
	kept, _ := st.Rejections(false)
	if len(kept["crm"].Records) != 3 || kept["crm"].Records[2].Body != crm[0].Body {
		t.Fatalf("the file's crm log, oldest first: %+v", kept["crm"])
	}
}

// failingKeeper fails its first writes, as a full disk does.
type failingKeeper struct {
	failures int
	kept     map[string]store.RejectionLog
}

func (k *failingKeeper) KeepRejections(_ context.Context, logs map[string]store.RejectionLog) error {
	if k.failures > 0 {
		k.failures--
		return store.ErrUnavailable
	}
	maps.Copy(k.kept, logs)
	return nil
}

func (k *failingKeeper) Rejections(bool) (map[string]store.RejectionLog, error) {
	return maps.Clone(k.kept), nil
}

// TestRejectionsWaitForAFailedWrite: a log whose write failed is read from
// memory meanwhile, and written whole at the next flush that succeeds.
func TestRejectionsWaitForAFailedWrite(t *testing.T) {
	keeper := &failingKeeper{failures: 2, kept: map[string]store.RejectionLog{}}
	cfg, err := config.Parse("routes.yaml", []byte(rejectionsYAML), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := bolt.Open(filepath.Join(t.TempDir(), "hookgate.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := ingest.NewRejections(keeper, nil)
	defer r.Close()
	p.KeepRejections(r)
	p.Attach(st, nil, nil)
	h := &harness{p: p, store: st}
	h.send("/webhooks/github", nil, []byte(`{}`))
	if err := r.Flush(context.Background()); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("the first flush: %v", err)
	}
	// Recent flushes again (the second failure) and falls back on memory.
	if logs, err := r.Recent("github", 10); err != nil || len(logs["github"].Records) != 1 || len(keeper.kept) != 0 {
		t.Fatalf("read while the writes fail: %v %v, kept %v", logs, err, keeper.kept)
	}
	h.send("/webhooks/github", nil, []byte(`{}`))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(keeper.kept["github"].Records); n != 2 {
		t.Fatalf("the write that succeeded took %d records, want both", n)
	}
}
