package deliver

import (
	"context"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookgate/hookgate/internal/store"
)

// tracerName is the instrumentation scope of the attempts' spans.
const tracerName = "github.com/hookgate/hookgate/internal/deliver"

// w3c reads the trace context an event stored and writes the attempt's on
// the delivery request: W3C Trace Context, the one every backend reads.
var w3c propagation.TraceContext

// traceAttempt starts the span of one attempt, a child of the span that
// ingested the event, when the event was traced: it is the gateway's hop
// of the provider's request. An event without a trace gets no span and
// ctx is returned as it is. With no provider to record it (none learned
// yet after a restart), the span is the stored context itself, so the
// backend still joins the event's trace, under the ingest span.
func (e *Engine) traceAttempt(ctx context.Context, upstream string, t store.Task, n int) (context.Context, trace.Span) {
	if len(t.Event.Trace) == 0 {
		return ctx, trace.SpanFromContext(context.Background())
	}
	parent := w3c.Extract(ctx, propagation.MapCarrier(t.Event.Trace))
	if !trace.SpanContextFromContext(parent).IsValid() {
		return ctx, trace.SpanFromContext(context.Background())
	}
	return e.tracerProvider().Tracer(tracerName).Start(parent, "hookgate.deliver",
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("hookgate.upstream", upstream),
			attribute.String("hookgate.event_id", t.Event.ID.String()),
			attribute.Int("hookgate.attempt", n),
			attribute.String("http.request.method", t.Event.Method),
		))
}

// setTraceHeaders puts the attempt's span on the request as traceparent
// (and tracestate). The gateway's hop wins over the headers the provider
// sent or a route set: they name a span the backend's parent is not.
func setTraceHeaders(ctx context.Context, h http.Header) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	h.Del("Traceparent")
	h.Del("Tracestate")
	w3c.Inject(ctx, propagation.HeaderCarrier(h))
}

// endAttemptSpan records the attempt's result on its span and ends it.
func endAttemptSpan(span trace.Span, a store.Attempt, next store.State) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("hookgate.outcome", string(next)))
	if a.Status != 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", a.Status))
	}
	if next != store.StateDelivered {
		msg := a.Error // redacted: no URL credentials or query values
		if msg == "" {
			msg = "status " + strconv.Itoa(a.Status)
		}
		span.SetStatus(codes.Error, msg)
	}
}

// tracerProvider is the provider attempts' spans come from: the one the
// engine was given, else OpenTelemetry's global one.
func (e *Engine) tracerProvider() trace.TracerProvider {
	if e.tracing != nil {
		if tp := e.tracing(); tp != nil {
			return tp
		}
	}
	return otel.GetTracerProvider()
}
