package rules

import (
	"fmt"
)

// Rule is one compiled route.
type Rule struct {
	Name   string
	When   *Program
	Schema *Schema
	To     []string
	// Stop ends evaluation when the rule matches.
	Stop bool
	// Shape changes what the rule's upstreams receive; nil keeps the
	// request byte for byte.
	Shape *Shape
}

// Table is a source's compiled routing.
type Table struct {
	Rules   []Rule
	Default []string
}

// NeedsBody reports whether evaluating the table reads the body.
func (t *Table) NeedsBody() bool {
	for _, r := range t.Rules {
		if r.Schema != nil || (r.When != nil && r.When.NeedsBody()) || r.Shape.needsBody() {
			return true
		}
	}
	return false
}

// Destination is one upstream an event goes to, the rule that sent it, and
// how that rule shapes the delivery.
type Destination struct {
	Upstream string
	Route    string
	Shape    *Shape
}

// RuleTrace says how one rule fared, for `hookgate route`.
type RuleTrace struct {
	Name    string
	Matched bool
	Err     error
}

// Decide returns the destinations for an event: every matching rule, in
// order, each upstream once, until a matching rule with stop; the default
// when nothing matched. Evaluation errors count as no match and are returned.
func (t *Table) Decide(env *Env) ([]Destination, []error) {
	var errs []error
	dests := t.evaluate(env, func(r *Rule, _ bool, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("route %s: %w", r.Name, err))
		}
	})
	return dests, errs
}

// Trace is Decide with the outcome of every rule evaluated.
func (t *Table) Trace(env *Env) ([]Destination, []RuleTrace) {
	var trace []RuleTrace
	dests := t.evaluate(env, func(r *Rule, matched bool, err error) {
		trace = append(trace, RuleTrace{Name: r.Name, Matched: matched, Err: err})
	})
	return dests, trace
}

func (t *Table) evaluate(env *Env, seen func(r *Rule, matched bool, err error)) []Destination {
	var out []Destination
	matched := false
	for i := range t.Rules {
		r := &t.Rules[i]
		ok := true
		var err error
		if r.When != nil {
			ok, err = r.When.Match(env)
		}
		if ok && r.Schema != nil {
			ok = env.Body != nil && r.Schema.Match(env.Body)
		}
		seen(r, ok, err)
		if !ok {
			continue
		}
		matched = true
		out = addDestinations(out, r.To, r.Name, r.Shape)
		if r.Stop {
			break
		}
	}
	if !matched {
		out = addDestinations(out, t.Default, "default", nil)
	}
	return out
}

func addDestinations(out []Destination, upstreams []string, route string, shape *Shape) []Destination {
next:
	for _, u := range upstreams {
		for _, d := range out {
			if d.Upstream == u {
				continue next
			}
		}
		out = append(out, Destination{Upstream: u, Route: route, Shape: shape})
	}
	return out
}
