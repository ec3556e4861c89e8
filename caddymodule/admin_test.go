package caddymodule

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// TestAdminRouting: endpoints are chosen by method and path; a path the
// API has with another method is 405 with Allow, an unknown one 404, and
// a known one reaches its store (none is live here: 503).
func TestAdminRouting(t *testing.T) {
	cases := []struct {
		method, path string
		status       int
		allow        string
	}{
		{"GET", "/hookgate/events", http.StatusServiceUnavailable, ""},
		{"GET", "/hookgate/events/", http.StatusServiceUnavailable, ""},
		{"GET", "/hookgate/events/0123", http.StatusServiceUnavailable, ""},
		{"POST", "/hookgate/events/0123/replay", http.StatusServiceUnavailable, ""},
		{"DELETE", "/hookgate/secrets/asana", http.StatusServiceUnavailable, ""},
		{"POST", "/hookgate/upstreams/billing/pause", http.StatusServiceUnavailable, ""},
		{"DELETE", "/hookgate/events", http.StatusMethodNotAllowed, "GET"},
		{"GET", "/hookgate/events/0123/replay", http.StatusMethodNotAllowed, "POST"},
		{"GET", "/hookgate/secrets/asana", http.StatusMethodNotAllowed, "DELETE"},
		{"POST", "/hookgate/stats", http.StatusMethodNotAllowed, "GET"},
		{"GET", "/hookgate/nothing", http.StatusNotFound, ""},
		{"GET", "/hookgate/events/0123/replay/again", http.StatusNotFound, ""},
		{"GET", "/hookgate/", http.StatusNotFound, ""},
	}
	for _, c := range cases {
		w := httptest.NewRecorder()
		err := serveAdmin(w, httptest.NewRequest(c.method, c.path, nil))
		var apiErr caddy.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatus != c.status {
			t.Errorf("%s %s: %v, want status %d", c.method, c.path, err, c.status)
			continue
		}
		if got := w.Header().Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
	// The inspector's page needs no store.
	w := httptest.NewRecorder()
	if err := serveAdmin(w, httptest.NewRequest("GET", "/hookgate/ui/", nil)); err != nil || w.Code != http.StatusOK {
		t.Fatalf("inspector page: %v %d", err, w.Code)
	}
}
