// Package config is the routes schema, routes.yaml and the webhook_gateway
// handler's "routes" in Caddy's JSON: the upstreams, the sources and their
// verification, deduplication and routing settings, as documented types.
//
// One decoder fills the types from a yaml.Node tree (JSON is read the same
// way), so that every error names the file, line and column (or the JSON
// path) it comes from, and unknown keys are refused.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Defaults, kept in one place.
const (
	DefaultRetention       = 168 * time.Hour
	DefaultMaxBody         = 5 << 20
	DefaultTimeout         = 15 * time.Second
	DefaultConcurrency     = 16
	DefaultMaxAttempts     = 10
	DefaultInitialInterval = 5 * time.Second
	DefaultMaxInterval     = time.Hour
	DefaultResponseStatus  = 200
	// DefaultIPRangesRefresh is how often named IP ranges are fetched anew.
	DefaultIPRangesRefresh = 24 * time.Hour
	// MinIPRangesRefresh keeps a refresh from polling providers' lists.
	MinIPRangesRefresh = time.Minute
)

// Pos is a position in the configuration file.
type Pos struct {
	Line, Col int
}

// Error is a configuration error at a position in a file.
type Error struct {
	File string
	Pos  Pos
	// Path is where in a JSON configuration the error is, instead of Pos.
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("%s: %s", e.File, withPath(e.Msg, e.Path))
	}
	if e.Pos.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

// withPath puts the JSON path in front of a message once: a message that
// starts by naming the path, or a parent of it, names the path instead.
func withPath(msg, path string) string {
	subject, _, _ := strings.Cut(msg, " ")
	subject = strings.TrimSuffix(subject, ":")
	if subject == path || strings.HasPrefix(path, subject+".") || strings.HasPrefix(path, subject+"[") {
		return path + msg[len(subject):]
	}
	return path + ": " + msg
}

// Options change how a file is loaded.
type Options struct {
	// Expand replaces placeholders such as {env.X} in secrets, URLs and paths.
	// Nil leaves values as written.
	Expand func(string) (string, error)
	// NoSecrets leaves credentials written as placeholders (secrets,
	// reconcile credentials, provider_options, alert URLs) unresolved: each
	// placeholder's syntax is checked, and Routes.Unresolved names the
	// sources whose schemes then cannot be built, so a configuration can be
	// checked where its secrets cannot be read. Never for a configuration
	// that serves.
	NoSecrets bool
}

// Load reads, parses and checks a routes.yaml file. The returned error joins
// every problem found, each as a *Error.
func Load(path string, opts Options) (*Routes, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading routes file: %w", err)
	}
	return Parse(path, data, opts)
}

// Parse checks configuration text; path is used for error messages and to
// resolve relative file names.
func Parse(path string, data []byte, opts Options) (*Routes, error) {
	return parse(path, filepath.Dir(path), data, opts, false)
}

// ParseJSON checks a configuration carried as JSON, as the webhook_gateway
// handler carries it; name labels its errors, which give the JSON path of
// what they are about. Relative file names are taken from the working
// directory, as everywhere in Caddy's JSON.
func ParseJSON(name string, data []byte, opts Options) (*Routes, error) {
	return parse(name, "", data, opts, true)
}

// parse decodes the document into Routes (every value checking itself
// where it is written), then checks what spans sections.
func parse(name, dir string, data []byte, opts Options, isJSON bool) (*Routes, error) {
	r := &Routes{File: name}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(name, err)
	}
	if len(doc.Content) == 0 {
		return nil, r.Errorf(Pos{}, "file is empty")
	}
	d := &decoder{file: name, dir: dir, expand: opts.Expand, json: isJSON, noSecrets: opts.NoSecrets}
	if isJSON {
		d.paths = map[Pos]string{}
		indexPaths(&doc, "", d.paths)
		r.paths = d.paths
	}
	root := doc.Content[0]
	d.decode(root, reflect.ValueOf(r).Elem(), rootName)
	if root.Kind == yaml.MappingNode && fieldNode(root, "sources") == nil {
		d.errorf(root, "%s: no sources defined", rootName)
	}
	r.crossCheck(d)
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	r.Literals = d.literals
	r.Unresolved = d.unresolved
	return r, nil
}

// yamlError restates a yaml.v3 syntax error as file:line. yaml.v3 has no
// typed syntax error: it returns fmt errors "yaml: line N: reason" (its
// *TypeError, also text only, cannot arise when decoding into a yaml.Node),
// so the line is read from the text, here and nowhere else.
func yamlError(file string, err error) error {
	msg := err.Error()
	var line int
	if _, scanErr := fmt.Sscanf(msg, "yaml: line %d:", &line); scanErr == nil {
		_, reason, _ := strings.Cut(msg, ": line ")
		_, reason, _ = strings.Cut(reason, ": ")
		return &Error{File: file, Pos: Pos{Line: line, Col: 1}, Msg: reason}
	}
	return &Error{File: file, Msg: strings.TrimPrefix(msg, "yaml: ")}
}
