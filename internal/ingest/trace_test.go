package ingest_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookgate/hookgate/internal/store"
)

// sendTraced sends a signed GitHub event whose context carries ctx's span,
// as Caddy's tracing handler leaves it, and returns the stored event.
func (h *harness) sendTraced(t *testing.T, ctx context.Context, delivery string, header http.Header) (*store.Event, *httptest.ResponseRecorder) {
	t.Helper()
	body := []byte(`{"action":"opened"}`)
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/webhooks/github", bytes.NewReader(body))
	for k, v := range sign(t, "github", "gh-secret-0123456789", body) {
		req.Header[k] = v
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("X-GitHub-Delivery", delivery)
	rec := httptest.NewRecorder()
	h.p.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	id, err := store.ParseID(rec.Header().Get("Hookgate-Event-Id"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.store.Event(id)
	if err != nil {
		t.Fatal(err)
	}
	return got.Event, rec
}

// TestTracedRequestSpansAndStoredContext: a request that carries a span
// (Caddy's server span) gets an ingest span under it, with the verify and
// store stages under that, from the same provider; the event keeps the
// ingest span's traceparent for its deliveries.
func TestTracedRequestSpansAndStoredContext(t *testing.T) {
	h := newHarness(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	ctx, server := tp.Tracer("caddy").Start(context.Background(), "handler", trace.WithSpanKind(trace.SpanKindServer))
	ev, _ := h.sendTraced(t, ctx, "traced-1", nil)
	server.End()

	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		byName[s.Name()] = s
	}
	ingest, ok := byName["hookgate.ingest"]
	if !ok {
		t.Fatalf("no ingest span among %d ended spans", len(spans.Ended()))
	}
	if ingest.Parent().SpanID() != server.SpanContext().SpanID() || ingest.SpanContext().TraceID() != server.SpanContext().TraceID() {
		t.Errorf("ingest span's parent is %s, want the server span %s", ingest.Parent().SpanID(), server.SpanContext().SpanID())
	}
	for _, stage := range []string{"hookgate.verify", "hookgate.store"} {
		s, ok := byName[stage]
		if !ok {
			t.Errorf("no %s span", stage)
			continue
		}
		if s.Parent().SpanID() != ingest.SpanContext().SpanID() {
			t.Errorf("%s is not a child of the ingest span", stage)
		}
	}
	attrs := map[string]string{}
	for _, kv := range ingest.Attributes() {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	if attrs["hookgate.source"] != "github" || attrs["hookgate.outcome"] != "accepted" || attrs["http.response.status_code"] != "200" || attrs["hookgate.event_id"] != ev.ID.String() {
		t.Errorf("ingest span attributes: %v", attrs)
	}
	want := "00-" + server.SpanContext().TraceID().String() + "-" + ingest.SpanContext().SpanID().String() + "-01"
	if got := ev.Trace["traceparent"]; got != want {
		t.Errorf("stored traceparent %q, want the ingest span's %q", got, want)
	}
}

// TestUntracedRequestStoresNoTrace: without a span in the request's context
// (no tracing directive) nothing is traced and nothing is stored, whatever
// traceparent the provider sent; that header stays among the stored ones.
func TestUntracedRequestStoresNoTrace(t *testing.T) {
	h := newHarness(t)
	providers := http.Header{"Traceparent": {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}
	ev, _ := h.sendTraced(t, context.Background(), "untraced-1", providers)
	if ev.Trace != nil {
		t.Errorf("untraced request stored trace %v", ev.Trace)
	}
	if got := ev.Header.Get("Traceparent"); got != providers.Get("Traceparent") {
		t.Errorf("provider's traceparent stored as %q", got)
	}
}
