package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hookgate/hookgate/internal/rules"
	"github.com/hookgate/hookgate/internal/store"
)

// ErrRouted is returned when an event that already has deliveries is routed
// again; replay is the way to send it again.
var ErrRouted = errors.New("event is routed already; replay it instead")

// ErrHandshakeRecord is returned for a stored handshake (an SNS
// subscription confirmation): it is kept to be seen, never delivered.
var ErrHandshakeRecord = errors.New("event is a recorded handshake; it is never delivered")

// ErrUnknownSource is returned when a stored event's source is not in this
// configuration: another configuration sharing the store may have it.
var ErrUnknownSource = errors.New("source is not in the configuration")

// Reroute routes a stored event that no rule took, or that a validation gate
// quarantined, with the current rules. It returns the deliveries created;
// none means the rules still take nothing.
func (p *Pipeline) Reroute(ctx context.Context, id store.ID) ([]store.Target, error) {
	rec, err := p.store.Event(id)
	if err != nil {
		return nil, err
	}
	ev := rec.Event
	if ev.Handshake != "" {
		return nil, ErrHandshakeRecord
	}
	if !ev.Unrouted && ev.Quarantined == "" {
		return nil, ErrRouted
	}
	var src *source
	for _, s := range p.sources {
		if s.Name == ev.Source {
			src = s
		}
	}
	if src == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnknownSource, ev.Source)
	}
	env := newEnv(src, ev.Method, ev.Path, ev.RawQuery, ev.Header, ev.ReceivedAt)
	if src.needsBody {
		if body, err := rules.ParseBody(src.Format, ev.Body); err == nil {
			env.Body = body
		}
	}
	if src.Gate != nil && src.Gate.Check(env.Body) != nil {
		return nil, fmt.Errorf("event still fails the source's schema")
	}
	targets := p.targets(src, env, false)
	if len(targets) == 0 {
		return nil, nil
	}
	if err := p.store.AddDeliveries(ctx, id, targets); err != nil {
		return nil, err
	}
	return targets, nil
}

// Explanation is what `hookgate route` prints: how each rule fared and
// where the event would go.
type Explanation struct {
	Source   string
	Provider string
	Rules    []rules.RuleTrace
	Targets  []store.Target
	// BodyErr says why the body could not be parsed, if it could not.
	BodyErr error
}

// Explain routes an event without storing it. The body is read in the
// source's format; headers and query are keyed as the expressions see them.
func (p *Pipeline) Explain(sourceName string, headers, query map[string]string, body []byte) (*Explanation, error) {
	var src *source
	var names []string
	for _, s := range p.sources {
		names = append(names, s.Name)
		if s.Name == sourceName {
			src = s
		}
	}
	if src == nil {
		return nil, fmt.Errorf("no source %q (sources: %s)", sourceName, strings.Join(names, ", "))
	}
	env := &rules.Env{Headers: headers, Query: query, Path: src.Path, Method: "POST", Source: src.Name, Provider: src.Provider, ReceivedAt: p.now()}
	ex := &Explanation{Source: src.Name, Provider: src.Provider}
	if parsed, err := rules.ParseBody(src.Format, body); err == nil {
		env.Body = parsed
	} else {
		ex.BodyErr = err
	}
	_, ex.Rules = src.Rules.Trace(env)
	ex.Targets = p.targets(src, env, false)
	return ex, nil
}
