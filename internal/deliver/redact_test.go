package deliver

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// A failed attempt's stored and logged error shows no password and no query
// value, from the upstream's URL or from the request's own query.
func TestAttemptErrorsAreRedacted(t *testing.T) {
	s := openStore(t, "")
	// Nothing listens on port 1 of loopback: the attempt fails with the URL in its error.
	base, _ := url.Parse("http://user:hunter2-pass@127.0.0.1:1/hooks?api_key=upstream-secret-key")
	up := Upstream{Name: "u", URL: base, Timeout: 2 * time.Second, Concurrency: 1,
		Retry: RetryPolicy{MaxAttempts: 1, InitialInterval: time.Millisecond, MaxInterval: time.Millisecond}}
	ne := &store.NewEvent{Event: &store.Event{Source: "s", ReceivedAt: time.Now(), Method: "POST", Path: "/w",
		RawQuery: "token=request-secret-token", Body: []byte("{}")}, Targets: []store.Target{{Upstream: "u"}}}
	res, err := s.Ingest(context.Background(), ne)
	if err != nil {
		t.Fatal(err)
	}
	e := New(s, Options{})
	e.Activate("test", map[string]Upstream{"u": up})
	t.Cleanup(e.Stop)
	e.Notify("u")
	var rec *store.EventRecord
	eventually(t, "the failed attempt", func() bool {
		rec, err = s.Event(res.ID)
		return err == nil && len(rec.Attempts[0]) == 1
	})
	msg := rec.Attempts[0][0].Error
	for _, secret := range []string{"hunter2-pass", "upstream-secret-key", "request-secret-token"} {
		if strings.Contains(msg, secret) {
			t.Errorf("attempt error shows %q: %s", secret, msg)
		}
	}
	for _, kept := range []string{"127.0.0.1:1", "api_key=REDACTED", "token=REDACTED", "user@"} {
		if !strings.Contains(msg, kept) {
			t.Errorf("attempt error lacks %q: %s", kept, msg)
		}
	}
}
