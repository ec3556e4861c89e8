package ingest

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The request path is traced when the request already is: Caddy's tracing
// handler starts a server span and puts it in the request's context. Its
// tracer provider is not OpenTelemetry's global one, so the stages take the
// provider from that span (Span.TracerProvider), which exports on the same
// pipeline. An untraced request costs one context lookup and gets no spans.

// tracerName is the instrumentation scope of the request path's spans.
const tracerName = "github.com/hookgate/hookgate/internal/ingest"

// noSpan is what an untraced stage gets: ending it, or setting its
// attributes, does nothing.
var noSpan = trace.SpanFromContext(context.Background())

// startSpan starts a child span of the trace ctx carries, if it carries a
// valid one; otherwise it returns ctx and noSpan. It takes no attributes:
// set them when the span IsRecording, so an untraced request allocates
// nothing for them.
func startSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return ctx, noSpan
	}
	return parent.TracerProvider().Tracer(tracerName).Start(ctx, name)
}

// traceContext is the W3C trace context (traceparent, and tracestate when
// there is one) of the span ctx carries, as an event stores it for its
// deliveries; nil when there is none. W3C, whatever propagators Caddy runs,
// because that is what deliveries send.
func traceContext(ctx context.Context) map[string]string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier
}

// endIngestSpan records the answer on the request's ingest span.
func endIngestSpan(span trace.Span, status int, outcome, eventID string) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.Int("http.response.status_code", status), attribute.String("hookgate.outcome", outcome))
	if eventID != "" {
		span.SetAttributes(attribute.String("hookgate.event_id", eventID))
	}
	if status >= 500 {
		span.SetStatus(codes.Error, "answered "+strconv.Itoa(status))
	}
}
