package deliver

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/hookgate/hookgate/internal/rules"
	"github.com/hookgate/hookgate/internal/store"
)

// A route's path template puts each value in one segment, escaped once, and
// never lets a value climb out of the path it was given.
func TestRoutePathIsEscapedOnceAndCannotClimb(t *testing.T) {
	tpl, err := rules.CompileTemplate("/billing/{body.kind}")
	if err != nil {
		t.Fatal(err)
	}
	shape := &rules.Shape{Path: tpl}
	base, _ := url.Parse("http://backend.internal/base%20dir/hooks")
	cfg := Upstream{Name: "u", URL: base}
	for kind, wantURI := range map[string]string{
		"invoice":   "/base%20dir/hooks/billing/invoice",
		"a b/c":     "/base%20dir/hooks/billing/a%20b%2Fc",
		"50%":       "/base%20dir/hooks/billing/50%25",
		"x;y?z":     "/base%20dir/hooks/billing/x%3By%3Fz",
		"%2e%2e":    "/base%20dir/hooks/billing/%252e%252e",
		"caf\u00e9": "/base%20dir/hooks/billing/caf%C3%A9",
	} {
		shaped, err := shape.Apply(&rules.Env{Body: map[string]any{"kind": kind}})
		if err != nil {
			t.Fatalf("%q: %v", kind, err)
		}
		task := store.Task{Event: &store.Event{Method: http.MethodPost, Path: "/webhooks/x"}, Delivery: store.Delivery{Shaping: store.Shaping{Path: shaped.Path}}}
		req, err := buildRequest(context.Background(), cfg, task, 1)
		if err != nil {
			t.Fatalf("%q: %v", kind, err)
		}
		if got := req.URL.RequestURI(); got != wantURI {
			t.Errorf("value %q delivered to %s, want %s", kind, got, wantURI)
		}
	}
	for _, climbing := range []string{"..", "."} {
		if _, err := shape.Apply(&rules.Env{Body: map[string]any{"kind": climbing}}); err == nil {
			t.Errorf("a value of %q shaped a path", climbing)
		}
	}
}
