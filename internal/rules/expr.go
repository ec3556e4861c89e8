// Package rules is the rule engine behind dedup keys, live-mode checks,
// ordering keys, routing and shaping: expr-lang expressions, JSON Schemas and
// templates, compiled once per configuration and evaluated per event.
package rules

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
