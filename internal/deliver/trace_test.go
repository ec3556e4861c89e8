package deliver

import (
	"context"
	"net/http"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookgate/hookgate/internal/store"
)

const (
	ingestTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	ingestSpanID  = "00f067aa0ba902b7"
	// providersTraceparent is what a provider sent, stored with the headers.
	providersTraceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
)

// ingestTraced stores an event as a traced request leaves it: with the
// provider's own traceparent among its headers and the ingest span's
// context in Trace (nil for an untraced request).
func ingestTraced(t *testing.T, s store.Store, tc map[string]string, upstream string) store.ID {
	t.Helper()
	ne := &store.NewEvent{Event: &store.Event{
		Source: "github", ReceivedAt: time.Now(), Method: "POST", Path: "/webhooks/github",
		Header: http.Header{"Traceparent": {providersTraceparent}, "Tracestate": {"provider=1"}},
		Body:   []byte(`{}`), Trace: tc,
	}, Targets: []store.Target{{Upstream: upstream}}}
	res, err := s.Ingest(context.Background(), ne)
	if err != nil {
		t.Fatal(err)
	}
	return res.ID
}

// TestAttemptsAreSpansOfTheEventsTrace: each attempt of a traced event is
// a client span under the ingest span, a new one per attempt, and the
// backend gets that attempt's traceparent (and the trace's tracestate)
// instead of the provider's.
func TestAttemptsAreSpansOfTheEventsTrace(t *testing.T) {
	up := newUpstream(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	s := openStore(t, "")
	e := New(s, Options{TracerProvider: func() trace.TracerProvider { return tp }})
	defer e.Stop()
	e.Activate("cfg", map[string]Upstream{"legacy": up.config("legacy", 3)})
	id := ingestTraced(t, s, map[string]string{"traceparent": "00-" + ingestTraceID + "-" + ingestSpanID + "-01", "tracestate": "gw=7"}, "legacy")
	e.Notify("legacy")
	eventually(t, "delivery", func() bool { return deliveryState(t, s, id, 0).State == store.StateDelivered })
	eventually(t, "two ended spans", func() bool { return len(spans.Ended()) == 2 })

	reqs, ended := up.requests(), spans.Ended()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	seen := map[trace.SpanID]bool{}
	for i, span := range ended {
		sc := span.SpanContext()
		if sc.TraceID().String() != ingestTraceID || span.Parent().SpanID().String() != ingestSpanID || !span.Parent().IsRemote() {
			t.Errorf("attempt %d: span %s/%s, parent %s; want a child of the ingest span %s", i+1, sc.TraceID(), sc.SpanID(), span.Parent().SpanID(), ingestSpanID)
		}
		if span.SpanKind() != trace.SpanKindClient || span.Name() != "hookgate.deliver" {
			t.Errorf("attempt %d: %s span %q", i+1, span.SpanKind(), span.Name())
		}
		if seen[sc.SpanID()] {
			t.Errorf("attempt %d reuses span id %s", i+1, sc.SpanID())
		}
		seen[sc.SpanID()] = true
		want := "00-" + ingestTraceID + "-" + sc.SpanID().String() + "-01"
		if got := reqs[i].header.Get("Traceparent"); got != want {
			t.Errorf("attempt %d: traceparent %q, want the attempt span's %q", i+1, got, want)
		}
		if got := reqs[i].header.Values("Tracestate"); len(got) != 1 || got[0] != "gw=7" {
			t.Errorf("attempt %d: tracestate %q, want the trace's", i+1, got)
		}
	}
	if got := ended[0].Status().Code.String(); got != "Error" {
		t.Errorf("the 503 attempt's span status is %s, want Error", got)
	}
	if got := ended[1].Status().Code.String(); got != "Unset" {
		t.Errorf("the delivered attempt's span status is %s", got)
	}
}

// TestUntracedEventKeepsProvidersTraceparent: an event stored without a
// trace (tracing off) is delivered as before: the provider's traceparent
// passes through and no span is made, whatever provider the engine has.
func TestUntracedEventKeepsProvidersTraceparent(t *testing.T) {
	up := newUpstream(t, nil)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	s := openStore(t, "")
	e := New(s, Options{TracerProvider: func() trace.TracerProvider { return tp }})
	defer e.Stop()
	e.Activate("cfg", map[string]Upstream{"legacy": up.config("legacy", 3)})
	id := ingestTraced(t, s, nil, "legacy")
	e.Notify("legacy")
	eventually(t, "delivery", func() bool { return deliveryState(t, s, id, 0).State == store.StateDelivered })
	h := up.requests()[0].header
	if h.Get("Traceparent") != providersTraceparent || h.Get("Tracestate") != "provider=1" {
		t.Errorf("traceparent %q tracestate %q, want the provider's", h.Get("Traceparent"), h.Get("Tracestate"))
	}
	if n := len(spans.Started()); n != 0 {
		t.Errorf("%d spans for an untraced event", n)
	}
}

// TestTracedEventWithoutProvider: with no provider to record attempts
// (OpenTelemetry's global no-op one), the backend still joins the event's
// trace, under the ingest span.
func TestTracedEventWithoutProvider(t *testing.T) {
	up := newUpstream(t, nil)
	s := openStore(t, "")
	e := New(s, Options{})
	defer e.Stop()
	e.Activate("cfg", map[string]Upstream{"legacy": up.config("legacy", 3)})
	parent := "00-" + ingestTraceID + "-" + ingestSpanID + "-01"
	id := ingestTraced(t, s, map[string]string{"traceparent": parent}, "legacy")
	e.Notify("legacy")
	eventually(t, "delivery", func() bool { return deliveryState(t, s, id, 0).State == store.StateDelivered })
	h := up.requests()[0].header
	if h.Get("Traceparent") != parent || h.Get("Tracestate") != "" {
		t.Errorf("traceparent %q tracestate %q, want the ingest span's and none", h.Get("Traceparent"), h.Get("Tracestate"))
	}
}
