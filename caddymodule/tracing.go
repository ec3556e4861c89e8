package caddymodule

import (
	"net/http"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"
)

// Caddy's tracing handler keeps its tracer provider to itself: it does not
// set OpenTelemetry's global one, and it shares one provider per process
// across configurations. The request path takes it from the server span of
// each traced request; delivery runs outside any request, so the gateway
// learns the provider from those requests and hands it to the engines.
var requestTracing atomic.Pointer[tracerProviderRef]

type tracerProviderRef struct{ tp trace.TracerProvider }

// learnTracing keeps the provider of a traced request's span: after a
// reload that re-creates Caddy's provider, the next traced request brings
// the new one.
func learnTracing(r *http.Request) {
	span := trace.SpanFromContext(r.Context())
	if !span.SpanContext().IsValid() {
		return
	}
	tp := span.TracerProvider()
	if cur := requestTracing.Load(); cur != nil && sameProvider(cur.tp, tp) {
		return
	}
	requestTracing.Store(&tracerProviderRef{tp: tp})
}

// sameProvider compares providers without panicking on one whose type is
// not comparable.
func sameProvider(a, b trace.TracerProvider) (same bool) {
	defer func() { _ = recover() }()
	return a == b
}

// deliveryTracerProvider is the provider the delivery engines record
// attempts with: the one learned from traced requests; nil (the engine
// then uses OpenTelemetry's global one) before any came in.
func deliveryTracerProvider() trace.TracerProvider {
	if ref := requestTracing.Load(); ref != nil {
		return ref.tp
	}
	return nil
}
