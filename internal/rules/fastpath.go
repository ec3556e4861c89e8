package rules

import (
	"bytes"
	"encoding/json"

	"github.com/expr-lang/expr/ast"
)

// bodyPath reports the path of an expression that only reads one value of
// the body, such as body.id or body["event-data"]?.id, so that value can be
// read without parsing the whole body.
func bodyPath(node ast.Node) ([]string, bool) {
	var path []string
	for {
		switch n := node.(type) {
		case *ast.ChainNode:
			node = n.Node
		case *ast.MemberNode:
			prop, ok := n.Property.(*ast.StringNode)
			if !ok || n.Method {
				return nil, false
			}
			path = append([]string{prop.Value}, path...)
			node = n.Node
		case *ast.IdentifierNode:
			return path, n.Value == "body" && len(path) > 0
		default:
			return nil, false
		}
	}
}

// BodyPath returns the body path the expression reads, when that is all it
// does.
func (p *Program) BodyPath() ([]string, bool) {
	return p.path, p.path != nil
}

// ExtractKey reads the value at path from a JSON body and renders it as a
// key, as Key would after a full parse: strings as they are, numbers exactly
// (see number), an absent value as "". ok is false when the body is
// not JSON.
func ExtractKey(body []byte, path []string) (key string, ok bool) {
	if !json.Valid(body) {
		return "", false
	}
	raw := json.RawMessage(body)
	for _, name := range path {
		next, found := member(raw, name)
		if !found {
			return "", true
		}
		raw = next
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", true
	}
	switch t := v.(type) {
	case string, bool:
		key, _ := keyString(t)
		return key, true
	case json.Number:
		key, _ := keyString(number(t))
		return key, true
	}
	return "", true
}

// member returns the value of an object's key; like encoding/json, the
// last of repeated keys wins.
func member(raw json.RawMessage, name string) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var value json.RawMessage
	found := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, false
		}
		if k, _ := t.(string); k == name {
			value, found = v, true
		}
	}
	return value, found
}
