package verify

import (
	"slices"
	"strings"
	"testing"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
)

// The catalog's properties beyond "its signature verifies": every preset,
// including any added later, must pass each one.

// exprReads lists what an expression reads: header names and whether it
// reads the body.
func exprReads(t *testing.T, src string) (headers []string, body bool) {
	t.Helper()
	tree, err := parser.Parse(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	v := &readVisitor{}
	ast.Walk(&tree.Node, v)
	return v.headers, v.body
}

type readVisitor struct {
	headers []string
	body    bool
}

func (v *readVisitor) Visit(n *ast.Node) {
	switch node := (*n).(type) {
	case *ast.IdentifierNode:
		if node.Value == "body" {
			v.body = true
		}
	case *ast.MemberNode:
		if id, ok := node.Node.(*ast.IdentifierNode); ok && id.Value == "headers" {
			if s, ok := node.Property.(*ast.StringNode); ok {
				v.headers = append(v.headers, s.Value)
			}
		}
	}
}

// TestEveryReadIsSignedOrDocumented: what a preset's dedup key and live
// marker read is covered by the signature, or the preset says otherwise: a
// live marker over unsigned input is LiveUnsigned (and mode refuses it); a
// dedup key over an unsigned header is safe only where the body's digest
// is a second key (Replayable) or the preset's Unsigned list says why. A
// declarative scheme signs the timestamp and id it reads.
func TestEveryReadIsSignedOrDocumented(t *testing.T) {
	for _, p := range Presets() {
		t.Run(p.Name, func(t *testing.T) {
			var signed []string
			if p.Bespoke.Build == nil {
				s, err := compileSpec(p.Spec)
				if err != nil {
					t.Fatal(err)
				}
				signed = s.SignedHeaders()
				if d, ok := s.(*Declarative); ok {
					if (p.Spec.TimestampHeader != "" || p.Spec.TimestampKey != "") && !d.needsTS {
						t.Errorf("reads a timestamp its content does not sign")
					}
					if p.Spec.IDHeader != "" && !d.needsID {
						t.Errorf("reads an id its content does not sign")
					}
				}
			}
			isSigned := func(h string) bool {
				return slices.ContainsFunc(signed, func(s string) bool { return strings.EqualFold(s, h) })
			}
			documented := func(h string) bool {
				return slices.ContainsFunc(p.Trust.Unsigned, func(u string) bool { return strings.HasPrefix(strings.ToLower(u), strings.ToLower(h)+":") })
			}
			if p.Live.Expr != "" {
				headers, body := exprReads(t, p.Live.Expr)
				for _, h := range headers {
					if !isSigned(h) && !p.Live.Unsigned {
						t.Errorf("live marker reads unsigned header %s without LiveUnsigned", h)
					}
				}
				if body && p.Trust.BodyUnsigned && !p.Live.Unsigned {
					t.Errorf("live marker reads an unsigned body without LiveUnsigned")
				}
			}
			if p.Dedup.Key != "" {
				headers, _ := exprReads(t, p.Dedup.Key)
				for _, h := range headers {
					if !isSigned(h) && !p.Replayable() && !p.Trust.BodyUnsigned && !documented(h) {
						t.Errorf("dedup key reads unsigned header %s: a capture sent again under another value would be a new event (sign it, or say why in Unsigned)", h)
					}
				}
			}
		})
	}
}
