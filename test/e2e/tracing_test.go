package e2e

import (
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes the protobuf
// export requests the gateway's exporter posts to /v1/traces.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	addr  string
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rcv := &otlpReceiver{addr: l.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(raw, &req) != nil {
			t.Errorf("OTLP receiver: %s %s (%s) does not decode as an export request", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rcv.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				rcv.spans = append(rcv.spans, ss.Spans...)
			}
		}
		rcv.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return rcv
}

// named returns the received spans with the given name.
func (r *otlpReceiver) named(name string) []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range r.spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// byID finds a received span by its id.
func (r *otlpReceiver) byID(id []byte) *tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.spans {
		if string(s.SpanId) == string(id) {
			return s
		}
	}
	return nil
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			if sv := kv.Value.GetStringValue(); sv != "" {
				return sv
			}
			return strconv.FormatInt(kv.Value.GetIntValue(), 10)
		}
	}
	return ""
}

const tracedCaddyfile = `{
	admin 127.0.0.1:%d
	storage file_system %s/caddy-data
}
:%d {
	tracing
	webhook_gateway ./routes.yaml {
		storage ./data/hookgate.db
	}
	reverse_proxy %s
}
`

// TestTracingJoinsIngestAndAttempts runs the gateway behind Caddy's tracing
// directive, exporting over OTLP/HTTP to a receiver in the test: the ingest
// span is a child of Caddy's server span, each attempt is a span of the
// same trace under the ingest span, and the upstream receives each
// attempt's own span as traceparent.
func TestTracingJoinsIngestAndAttempts(t *testing.T) {
	rcv := newOTLPReceiver(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+rcv.addr)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100") // milliseconds: export soon after a span ends
	up := newRecorder(t, "", func(n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf(`
upstreams:
  legacy:
    url: http://%s
    retry: {max_attempts: 3, initial_interval: 100ms, max_interval: 200ms}
sources:
  github:
    path: /webhooks/github
    provider: github
    secrets: [gh-e2e-secret-0123456789]
    default: [legacy]
`, up.addr)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	writeFile(t, filepath.Join(dir, "Caddyfile"), fmt.Sprintf(tracedCaddyfile, admin, dir, port, passthrough.addr))
	g := startGateway(t, dir, port, admin)

	ids := g.ackGitHubEvents(t, "traced", 1)
	var eventID string
	for id := range ids {
		eventID = id
	}
	waitFor(t, "two attempts at the upstream", 20*time.Second, func() bool { return len(up.byEvent()[eventID]) == 2 })
	waitFor(t, "the ingest span and two attempt spans exported", 20*time.Second, func() bool {
		return len(rcv.named("hookgate.ingest")) == 1 && len(rcv.named("hookgate.deliver")) == 2
	})

	ingest := rcv.named("hookgate.ingest")[0]
	server := rcv.byID(ingest.ParentSpanId)
	switch {
	case server == nil:
		t.Fatalf("the ingest span's parent %x was not exported", ingest.ParentSpanId)
	case server.Kind != tracepb.Span_SPAN_KIND_SERVER || string(server.TraceId) != string(ingest.TraceId):
		t.Fatalf("the ingest span's parent is a %s span %q of trace %x, want Caddy's server span of trace %x", server.Kind, server.Name, server.TraceId, ingest.TraceId)
	}
	if got := spanAttr(ingest, "hookgate.event_id"); got != eventID {
		t.Errorf("ingest span event id %q, want %s", got, eventID)
	}
	traceID := hex.EncodeToString(ingest.TraceId)
	for _, attempt := range rcv.named("hookgate.deliver") {
		n := spanAttr(attempt, "hookgate.attempt")
		if string(attempt.TraceId) != string(ingest.TraceId) || string(attempt.ParentSpanId) != string(ingest.SpanId) {
			t.Errorf("attempt %s: trace %x parent %x, want trace %s under the ingest span %x", n, attempt.TraceId, attempt.ParentSpanId, traceID, ingest.SpanId)
		}
		var got string
		for _, req := range up.byEvent()[eventID] {
			if req.Header.Get("Hookgate-Attempt") == n {
				got = req.Header.Get("Traceparent")
			}
		}
		if want := "00-" + traceID + "-" + hex.EncodeToString(attempt.SpanId) + "-01"; got != want {
			t.Errorf("attempt %s: upstream got traceparent %q, want the attempt span's %q", n, got, want)
		}
	}
	if a, b := rcv.named("hookgate.deliver")[0].SpanId, rcv.named("hookgate.deliver")[1].SpanId; string(a) == string(b) {
		t.Errorf("both attempts share span id %x", a)
	}
	// Hookgate's own log lines carry the trace id, under the name Caddy's
	// access log gives it.
	for _, msg := range []string{`"msg":"event received"`, `"msg":"delivered"`} {
		found := false
		for line := range strings.SplitSeq(g.log.String(), "\n") {
			found = found || (strings.Contains(line, msg) && strings.Contains(line, `"traceID":"`+traceID+`"`))
		}
		if !found {
			t.Errorf("no %s log line with traceID %s", msg, traceID)
		}
	}
}
