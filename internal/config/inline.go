package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// Inline turns routes.yaml text into the JSON document a webhook_gateway
// handler carries: the same keys in the same order, placeholders kept as
// written. Schema files are read and inlined, and relative file names
// (storage.path, storage.jetstream.credentials) are taken from the routes
// file's folder and written out absolute, so the document means what the
// file meant wherever it is later loaded. Problems are reported as
// file:line:col.
func Inline(path string, data []byte) ([]byte, error) {
	in := &inliner{file: path, dir: filepath.Dir(path)}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(path, err)
	}
	if len(doc.Content) == 0 {
		return nil, &Error{File: path, Msg: "file is empty"}
	}
	root := doc.Content[0]
	in.rewrite(root)
	if in.err != nil {
		return nil, in.err
	}
	var b bytes.Buffer
	if err := in.writeJSON(&b, root); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

type inliner struct {
	file, dir string
	err       error
}

func (in *inliner) errorf(n *yaml.Node, format string, args ...any) error {
	err := &Error{File: in.file, Pos: pos(n), Msg: fmt.Sprintf(format, args...)}
	if in.err == nil {
		in.err = err
	}
	return err
}

// literalFile reports whether a scalar names a file that can be read now:
// a name with placeholders is left for the loader.
func literalFile(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.Value != "" && !strings.Contains(n.Value, "{")
}

func (in *inliner) absolute(n *yaml.Node) {
	if literalFile(n) && !filepath.IsAbs(n.Value) {
		n.Value = filepath.Join(in.dir, n.Value)
		n.Tag, n.Style = "!!str", 0
	}
}

func (in *inliner) rewrite(root *yaml.Node) {
	storage := fieldNode(root, "storage")
	in.absolute(fieldNode(storage, "path"))
	in.absolute(fieldNode(fieldNode(storage, "jetstream"), "credentials"))
	if ups := fieldNode(root, "upstreams"); ups != nil && ups.Kind == yaml.MappingNode {
		for i := 1; i < len(ups.Content); i += 2 {
			tls := fieldNode(ups.Content[i], "tls")
			if ca := fieldNode(tls, "ca"); ca != nil && ca.Kind == yaml.SequenceNode {
				for _, item := range ca.Content {
					in.absolute(item)
				}
			} else {
				in.absolute(ca)
			}
			in.absolute(fieldNode(tls, "client_cert"))
			in.absolute(fieldNode(tls, "client_key"))
		}
	}
	sources := fieldNode(root, "sources")
	if sources == nil || sources.Kind != yaml.MappingNode {
		return
	}
	for i := 1; i < len(sources.Content); i += 2 {
		src := sources.Content[i]
		if routes := fieldNode(src, "routes"); routes != nil && routes.Kind == yaml.SequenceNode {
			for _, r := range routes.Content {
				in.inlineSchema(fieldNode(r, "schema"))
			}
		}
		switch v := fieldNode(src, "validate"); {
		case v == nil:
		case v.Kind == yaml.ScalarNode && literalFile(v):
			schema := *v
			in.inlineSchema(&schema)
			*v = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: v.Line, Column: v.Column,
				Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: "schema"}, &schema}}
		default:
			in.inlineSchema(fieldNode(v, "schema"))
		}
	}
}

// inlineSchema replaces a schema file name by the document it holds.
func (in *inliner) inlineSchema(n *yaml.Node) {
	if !literalFile(n) {
		return
	}
	name := n.Value
	if !filepath.IsAbs(name) {
		name = filepath.Join(in.dir, name)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		in.errorf(n, "schema: %v", err)
		return
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		in.errorf(n, "schema %s: not a JSON Schema object", name)
		return
	}
	line, col := n.Line, n.Column
	*n = *doc.Content[0]
	// Later errors point at the name in routes.yaml, not into the schema file.
	n.Line, n.Column = line, col
}

// writeJSON encodes a YAML tree as JSON, keeping the order of keys.
func (in *inliner) writeJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		return in.writeJSON(b, n.Content[0])
	case yaml.AliasNode:
		return in.writeJSON(b, n.Alias)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i]
			if key.Kind != yaml.ScalarNode || key.Value == "<<" {
				return in.errorf(key, "keys must be plain strings")
			}
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(key.Value)
			b.Write(k)
			b.WriteByte(':')
			if err := in.writeJSON(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := in.writeJSON(b, item); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		var v any = n.Value
		switch n.ShortTag() {
		case "!!null", "!!bool", "!!int", "!!float":
			if err := n.Decode(&v); err != nil {
				return in.errorf(n, "%v", err)
			}
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return in.errorf(n, "%s cannot be written as JSON: %v", n.Value, err)
		}
		b.Write(enc)
	default:
		return in.errorf(n, "unexpected YAML node")
	}
	return nil
}

// indexPaths records the JSON path of every node by its position, so that
// errors about a JSON configuration can name where they are.
func indexPaths(n *yaml.Node, path string, paths map[Pos]string) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			indexPaths(c, path, paths)
		}
		return
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			child := n.Content[i].Value
			if path != "" {
				child = path + "." + child
			}
			paths[pos(n.Content[i])] = child
			indexPaths(n.Content[i+1], child, paths)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			indexPaths(c, fmt.Sprintf("%s[%d]", path, i), paths)
		}
	}
	if _, seen := paths[pos(n)]; !seen && path != "" {
		paths[pos(n)] = path
	}
}
