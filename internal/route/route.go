// Package route decides where an event goes: expr-lang rules and JSON Schema
// matches, compiled once per configuration and evaluated per event.
package route

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hookgate/hookgate/internal/verify"
)

// maxNodes bounds the size of one expression.
const maxNodes = 2000

// Env is the expression environment. Headers and query hold the first value
// of each name; header names are lower-case.
type Env struct {
	Body     any               `expr:"body"`
	Headers  map[string]string `expr:"headers"`
	Query    map[string]string `expr:"query"`
	Path     string            `expr:"path"`
	Method   string            `expr:"method"`
	Source   string            `expr:"source"`
	Provider string            `expr:"provider"`
	// ReceivedAt is when the gateway received the event.
	ReceivedAt time.Time `expr:"received_at"`
}

// helpers are functions expressions may call besides expr's builtins
// (hasPrefix, hasSuffix, lower, upper, split, toJSON, len, …).
var helpers = []expr.Option{
	// jsonpath(value, "data.object.items[0].id") walks maps and lists and
	// yields nil where the path leads nowhere.
	expr.Function("jsonpath", func(params ...any) (any, error) {
		path, ok := params[1].(string)
		if !ok {
			return nil, fmt.Errorf("jsonpath: the path must be a string")
		}
		return JSONPath(params[0], path), nil
	}, new(func(any, string) any)),
}

// JSONPath walks value along a dotted path with [n] list indexes ("$." and a
// leading "." are optional) and returns nil where the path leads nowhere.
func JSONPath(value any, path string) any {
	path = strings.TrimPrefix(strings.TrimPrefix(path, "$"), ".")
	cur := value
	for path != "" {
		var part string
		part, path, _ = strings.Cut(path, ".")
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = m[name]
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			if !ok {
				return nil
			}
			n, err := strconv.Atoi(idx)
			list, isList := cur.([]any)
			if err != nil || !isList || n < 0 || n >= len(list) {
				return nil
			}
			cur = list[n]
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return cur
}

// Program is a compiled expression.
type Program struct {
	src       string
	program   *vm.Program
	needsBody bool
	path      []string // set when the expression only reads body.<path>
}

// NeedsBody reports whether the expression reads the parsed body.
func (p *Program) NeedsBody() bool { return p.needsBody }

// String returns the expression's source.
func (p *Program) String() string { return p.src }

// CompileCondition compiles an expression that must yield a bool.
func CompileCondition(src string) (*Program, error) {
	return compile(src, expr.AsBool())
}

// CompileKey compiles an expression that yields a string or number key.
func CompileKey(src string) (*Program, error) {
	return compile(src)
}

func compile(src string, extra ...expr.Option) (*Program, error) {
	opts := append([]expr.Option{expr.Env(Env{}), expr.MaxNodes(maxNodes)}, helpers...)
	opts = append(opts, extra...)
	prog, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, fmt.Errorf("invalid expression: %s", firstLine(err.Error()))
	}
	p := &Program{src: src, program: prog}
	node := prog.Node()
	ast.Walk(&node, bodyFinder{&p.needsBody})
	if path, ok := bodyPath(node); ok {
		p.path = path
	}
	return p, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

type bodyFinder struct{ found *bool }

func (f bodyFinder) Visit(n *ast.Node) {
	if id, ok := (*n).(*ast.IdentifierNode); ok && id.Value == "body" {
		*f.found = true
	}
}

// vms recycles expression machines: running a program on a fresh one costs
// an allocation of its stack every time.
var vms = sync.Pool{New: func() any { return new(vm.VM) }}

func (p *Program) run(env *Env) (any, error) {
	machine := vms.Get().(*vm.VM)
	out, err := machine.Run(p.program, env)
	vms.Put(machine)
	return out, err
}

// Match evaluates a condition; an evaluation error is a non-match with the error.
func (p *Program) Match(env *Env) (bool, error) {
	out, err := p.run(env)
	if err != nil {
		return false, errors.New(firstLine(err.Error()))
	}
	b, _ := out.(bool)
	return b, nil
}

// Value evaluates an expression to whatever it yields.
func (p *Program) Value(env *Env) (any, error) {
	out, err := p.run(env)
	if err != nil {
		return nil, errors.New(firstLine(err.Error()))
	}
	return out, nil
}

// Key evaluates a key expression to a string; empty when the value is absent.
func (p *Program) Key(env *Env) (string, error) {
	out, err := p.run(env)
	if err != nil {
		return "", errors.New(firstLine(err.Error()))
	}
	return keyString(out)
}

// keyString renders a value as a key: numbers exactly (see number).
func keyString(v any) (string, error) {
	switch t := v.(type) {
	case nil:
		return "", nil
	case string:
		return t, nil
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), nil
	case int:
		return strconv.Itoa(t), nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case json.Number:
		return t.String(), nil
	case bool:
		return strconv.FormatBool(t), nil
	default:
		return "", fmt.Errorf("key expression yields %T, want a string or number", v)
	}
}

// ErrUnparseable is returned when a body that must be parsed is neither JSON
// nor a form.
var ErrUnparseable = errors.New("body is neither JSON nor a form")

// ParseBody parses a body in its provider's format (verify.FormatJSON,
// FormatForm or FormatEither) into the value expressions see as `body`.
// The format comes from the source, never from the request's Content-Type,
// which nothing signs. JSON numbers keep their exact value (see number).
func ParseBody(format string, body []byte) (any, error) {
	if format != verify.FormatJSON && format != verify.FormatForm {
		format = verify.FormatForm
		if verify.LooksJSON(body) {
			format = verify.FormatJSON
		}
	}
	if format == verify.FormatForm {
		values, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, ErrUnparseable
		}
		form := make(map[string]any, len(values))
		for k, v := range values {
			form[k] = v[0]
		}
		return form, nil
	}
	if !verify.LooksJSON(body) {
		return nil, ErrUnparseable
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, ErrUnparseable
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, ErrUnparseable // something after the value
	}
	return exactNumbers(v), nil
}

// Schema is a compiled JSON Schema.
type Schema struct{ schema *jsonschema.Schema }

// CompileSchema compiles the JSON Schema file at path.
func CompileSchema(path string) (*Schema, error) {
	c := jsonschema.NewCompiler()
	s, err := c.Compile(path)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %s", path, oneLine(err))
	}
	return &Schema{schema: s}, nil
}

// oneLine folds a multi-line error into one line, for file:line: messages.
func oneLine(err error) string {
	var parts []string
	for line := range strings.SplitSeq(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, "; ")
}

// CompileInlineSchema compiles a schema written in routes.yaml; name
// identifies it in errors.
func CompileInlineSchema(name string, doc any) (*Schema, error) {
	c := jsonschema.NewCompiler()
	url := "inline:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("inline schema: %s", oneLine(err))
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("inline schema: %s", oneLine(err))
	}
	return &Schema{schema: s}, nil
}

// Match reports whether body satisfies the schema.
func (s *Schema) Match(body any) bool {
	return s.schema.Validate(body) == nil
}

// Check returns why body does not satisfy the schema, or nil.
func (s *Schema) Check(body any) error {
	return s.schema.Validate(body)
}

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
