package rules

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/hookgate/hookgate/internal/store"
)

// Template is text with {expression} parts, such as "/billing/{body.type}".
type Template struct {
	parts []templatePart
}

type templatePart struct {
	literal string
	expr    *Program
}

// CompileTemplate compiles a template; "{{" and "}}" stand for braces.
func CompileTemplate(src string) (*Template, error) {
	t := &Template{}
	for src != "" {
		open := strings.IndexByte(src, '{')
		if open < 0 {
			t.parts = append(t.parts, templatePart{literal: src})
			break
		}
		if open > 0 {
			t.parts = append(t.parts, templatePart{literal: src[:open]})
		}
		end := strings.IndexByte(src[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("unclosed { in template %q", src)
		}
		prog, err := CompileKey(src[open+1 : open+end])
		if err != nil {
			return nil, err
		}
		t.parts = append(t.parts, templatePart{expr: prog})
		src = src[open+end+1:]
	}
	return t, nil
}

// Render evaluates the template; escape, when set, is applied to each
// expression's value.
func (t *Template) Render(env *Env, escape func(string) string) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		if p.expr == nil {
			b.WriteString(p.literal)
			continue
		}
		v, err := p.expr.Key(env)
		if err != nil {
			return "", err
		}
		if escape != nil {
			v = escape(v)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// renderPath renders a path template into an escaped path: each value is
// one path segment, and a value that would climb the path ("." or "..") is
// refused rather than let a sender steer the delivery elsewhere.
func (t *Template) renderPath(env *Env) (string, error) {
	var climbing string
	p, err := t.Render(env, func(v string) string {
		if v == "." || v == ".." {
			climbing = v
		}
		return url.PathEscape(v)
	})
	if err != nil {
		return "", err
	}
	if climbing != "" {
		return "", fmt.Errorf("a value of %q would climb the path", climbing)
	}
	return p, nil
}

func (t *Template) needsBody() bool {
	for _, p := range t.parts {
		if p.expr != nil && p.expr.NeedsBody() {
			return true
		}
	}
	return false
}

// Shape is how a route changes what its upstreams receive.
type Shape struct {
	// Path replaces the request path (the upstream URL's path still leads).
	Path *Template
	// SetHeaders adds or replaces headers; RemoveHeaders drops them.
	SetHeaders    map[string]*Template
	RemoveHeaders []string
	// Transform builds a new JSON body; the original stays stored.
	Transform *Program
}

func (s *Shape) needsBody() bool {
	if s == nil {
		return false
	}
	if (s.Path != nil && s.Path.needsBody()) || (s.Transform != nil && s.Transform.NeedsBody()) {
		return true
	}
	for _, t := range s.SetHeaders {
		if t.needsBody() {
			return true
		}
	}
	return false
}

// Shaped is a rendered Shape for one event.
type Shaped struct {
	store.Shaping
	// Body is the transformed body, nil for the original.
	Body []byte
}

// Apply renders the shape for an event.
func (s *Shape) Apply(env *Env) (*Shaped, error) {
	if s == nil {
		return nil, nil
	}
	out := &Shaped{Shaping: store.Shaping{RemoveHeaders: s.RemoveHeaders}}
	if s.Path != nil {
		p, err := s.Path.renderPath(env)
		if err != nil {
			return nil, fmt.Errorf("path: %w", err)
		}
		out.Path = p
	}
	if len(s.SetHeaders) > 0 {
		out.SetHeaders = make(map[string]string, len(s.SetHeaders))
		for name, t := range s.SetHeaders {
			v, err := t.Render(env, nil)
			if err != nil {
				return nil, fmt.Errorf("header %s: %w", name, err)
			}
			if strings.ContainsAny(v, "\r\n") {
				return nil, fmt.Errorf("header %s: value contains a line break", name)
			}
			out.SetHeaders[name] = v
		}
	}
	if s.Transform != nil {
		v, err := s.Transform.Value(env)
		if err != nil {
			return nil, fmt.Errorf("transform: %w", err)
		}
		body, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("transform: %w", err)
		}
		out.Body = body
	}
	return out, nil
}
