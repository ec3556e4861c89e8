package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/hookgate/hookgate/internal/closest"
)

// The decoder fills the schema's types from a yaml.Node tree (JSON is
// read as YAML, which keeps every node's position): mappings into structs
// by their json names, refusing unknown and repeated keys; lists and
// scalars into Go values; and the values that check themselves (Duration,
// Size, Secret, …) through their own decodeNode. Every problem is kept,
// with the position it is about, and decoding goes on, so one pass reports
// them all.

// nodeDecoder is a value that reads itself from a node.
type nodeDecoder interface {
	decodeNode(d *decoder, n *yaml.Node, what string)
}

// checker is a struct that checks its fields once they are all read.
type checker interface {
	check(d *decoder, n *yaml.Node, what string)
}

// defaulter is a struct that sets its defaults before its keys are read.
type defaulter interface {
	setDefaults()
}

// decoder carries what decoding needs besides the node: the file (for
// errors), the folder relative names are taken from, placeholder
// expansion, and what it found.
type decoder struct {
	file   string
	dir    string
	expand func(string) (string, error)
	errs   []error
	// paths names the JSON path at each position, for a JSON configuration.
	paths    map[Pos]string
	literals []Literal
	// source is the name of the source being read, for literals.
	source string
	// json names keys by their JSON path (sources.stripe) rather than as
	// routes.yaml's messages do (source stripe).
	json bool
	// noSecrets keeps credentials' placeholders as written (Options.NoSecrets);
	// unresolved names the sources that have one.
	noSecrets  bool
	unresolved map[string]bool
}

// entry names a block of a named mapping: "source stripe" in routes.yaml,
// "sources.stripe" in JSON, where errors name JSON paths.
func (d *decoder) entry(kind, key string) string {
	if d.json {
		return kind + "s." + key
	}
	return kind + " " + key
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	var at Pos
	if n != nil {
		at = pos(n)
	}
	d.errorAt(at, format, args...)
}

func (d *decoder) errorAt(at Pos, format string, args ...any) {
	d.errs = append(d.errs, d.err(at, format, args...))
}

func (d *decoder) err(at Pos, format string, args ...any) error {
	if d.paths != nil {
		return &Error{File: d.file, Path: d.paths[at], Msg: fmt.Sprintf(format, args...)}
	}
	return &Error{File: d.file, Pos: at, Msg: fmt.Sprintf(format, args...)}
}

func pos(n *yaml.Node) Pos { return Pos{Line: n.Line, Col: n.Column} }

// sub names a key under what, as errors name it.
func sub(what, key string) string {
	if what == "" || what == rootName {
		return key
	}
	return what + "." + key
}

// rootName is how messages name the whole file.
const rootName = "routes file"

// decode fills v from n.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, what string) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if v.CanAddr() {
		if nd, ok := v.Addr().Interface().(nodeDecoder); ok {
			nd.decodeNode(d, n, what)
			return
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		if n.Tag == "!!null" {
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem(), what)
	case reflect.Struct:
		d.decodeStruct(n, v, what)
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			d.decodeRaw(n, v, what)
			return
		}
		items := d.listNodes(n, what)
		out := reflect.MakeSlice(v.Type(), len(items), len(items))
		for i, item := range items {
			d.decode(item, out.Index(i), fmt.Sprintf("%s[%d]", what, i))
		}
		v.Set(out)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			d.errorf(n, "%s must be a mapping", what)
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i]
			elem := reflect.New(v.Type().Elem()).Elem()
			d.decode(n.Content[i+1], elem, sub(what, key.Value))
			m.SetMapIndex(reflect.ValueOf(key.Value), elem)
		}
		v.Set(m)
	case reflect.String:
		v.SetString(d.str(n, what))
	case reflect.Bool:
		v.SetBool(d.boolean(n, what))
	case reflect.Int:
		v.SetInt(int64(d.integer(n, what, 0)))
	case reflect.Float64:
		var f float64
		if n.Kind != yaml.ScalarNode || n.Decode(&f) != nil {
			d.errorf(n, "%s must be a number", what)
		}
		v.SetFloat(f)
	case reflect.Interface:
		var doc any
		if err := n.Decode(&doc); err != nil {
			d.errorf(n, "%s: %v", what, err)
			return
		}
		v.Set(reflect.ValueOf(&doc).Elem())
	default:
		panic(fmt.Sprintf("config: cannot decode into %s", v.Type()))
	}
}

// decodeRaw keeps a mapping as JSON (Caddy's transport, in its own
// vocabulary).
func (d *decoder) decodeRaw(n *yaml.Node, v reflect.Value, what string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping", what)
		return
	}
	var doc any
	if err := n.Decode(&doc); err != nil {
		d.errorf(n, "%s: %v", what, err)
		return
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		d.errorf(n, "%s cannot be written as JSON: %v", what, err)
		return
	}
	v.SetBytes(raw)
}

// field is a struct field as the schema names it.
type field struct {
	name  string
	index []int
	min   int // the least an integer may be, when the tag sets one
	// positive refuses a zero duration.
	positive bool
}

// fieldsOf caches schemaFields; configurations may load concurrently.
var fieldsOf sync.Map // reflect.Type → []field

// schemaFields lists a struct's keys: its exported fields with a yaml name
// (the same as their json name, which Caddy's JSON uses).
func schemaFields(t reflect.Type) []field {
	if fs, ok := fieldsOf.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if !sf.IsExported() || name == "" || name == "-" {
			continue
		}
		f := field{name: name, index: sf.Index}
		if m := sf.Tag.Get("min"); m != "" {
			f.min, _ = strconv.Atoi(m)
		}
		f.positive = sf.Tag.Get("positive") == "true"
		fs = append(fs, f)
	}
	fieldsOf.Store(t, fs)
	return fs
}

// decodeStruct reads a mapping into a struct by the json names of its
// fields, refusing unknown and repeated keys, and records where each key
// was written when the struct embeds Located.
func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, what string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping", what)
		return
	}
	if df, ok := v.Addr().Interface().(defaulter); ok {
		df.setDefaults()
	}
	loc := located(v)
	if loc != nil {
		loc.at = pos(n)
	}
	fs := schemaFields(v.Type())
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if seen[key.Value] {
			d.errorf(key, "%s: key %q appears twice", what, key.Value)
			continue
		}
		seen[key.Value] = true
		j := slices.IndexFunc(fs, func(f field) bool { return f.name == key.Value })
		if j < 0 {
			d.errorf(key, "%s: unknown key %q%s", what, key.Value, knownKeys(fs, key.Value))
			continue
		}
		errs := len(d.errs)
		d.decodeField(val, v.FieldByIndex(fs[j].index), fs[j], sub(what, key.Value))
		if loc != nil {
			loc.keep(key.Value, pos(key), pos(val), len(d.errs) > errs)
		}
	}
	if c, ok := v.Addr().Interface().(checker); ok {
		c.check(d, n, what)
	}
}

func (d *decoder) decodeField(n *yaml.Node, v reflect.Value, f field, what string) {
	if f.min > 0 && v.Kind() == reflect.Int {
		v.SetInt(int64(d.integer(n, what, f.min)))
		return
	}
	errs := len(d.errs)
	d.decode(n, v, what)
	if f.positive && len(d.errs) == errs && v.Int() == 0 {
		d.errorf(n, "%s must be more than zero", what)
	}
}

// knownKeys suggests the keys closest to an unknown one and lists them all.
func knownKeys(fs []field, key string) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	hint := ""
	if close := closest.Names(key, names); len(close) > 0 {
		hint = "; did you mean " + strings.Join(close, " or ") + "?"
	}
	slices.Sort(names)
	return " (known: " + strings.Join(names, ", ") + ")" + hint
}

// located returns the Located a struct embeds, if any.
func located(v reflect.Value) *Located {
	f := v.FieldByName("Located")
	if !f.IsValid() || f.Type() != reflect.TypeFor[Located]() {
		return nil
	}
	return f.Addr().Interface().(*Located)
}

// Located records where a mapping and each of its keys and values were
// written, for what is checked after decoding.
type Located struct {
	at     Pos
	keys   map[string]Pos
	values map[string]Pos
	failed map[string]bool
}

func (l *Located) keep(key string, k, v Pos, failed bool) {
	if l.keys == nil {
		l.keys, l.values, l.failed = map[string]Pos{}, map[string]Pos{}, map[string]bool{}
	}
	l.keys[key], l.values[key], l.failed[key] = k, v, failed
}

// Failed reports whether reading key's value was refused (so checks of
// the whole need not add to its error).
func (l Located) Failed(key string) bool { return l.failed[key] }

// Pos is where the mapping was written.
func (l Located) Pos() Pos { return l.at }

// Has reports whether key was written.
func (l Located) Has(key string) bool { _, ok := l.keys[key]; return ok }

// KeyPos is where key was written, or the mapping's position when it was
// not.
func (l Located) KeyPos(key string) Pos {
	if p, ok := l.keys[key]; ok {
		return p
	}
	return l.at
}

// ValuePos is where key's value was written, or the mapping's position.
func (l Located) ValuePos(key string) Pos {
	if p, ok := l.values[key]; ok {
		return p
	}
	return l.at
}

// Scalars.

func (d *decoder) str(n *yaml.Node, what string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.errorf(n, "%s must be a string", what)
		return ""
	}
	return n.Value
}

func (d *decoder) boolean(n *yaml.Node, what string) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		d.errorf(n, "%s must be true or false", what)
	}
	return b
}

func (d *decoder) integer(n *yaml.Node, what string, min int) int {
	var v int
	if n.Kind != yaml.ScalarNode || n.Decode(&v) != nil {
		d.errorf(n, "%s must be a whole number", what)
		return 0
	}
	if v < min {
		d.errorf(n, "%s must be at least %d", what, min)
	}
	return v
}

// expanded is a string with its placeholders expanded.
func (d *decoder) expanded(n *yaml.Node, what string) string {
	s := d.str(n, what)
	if i := strings.Index(s, "{$"); i >= 0 {
		name, _, _ := strings.Cut(s[i+2:], "}")
		name, _, _ = strings.Cut(name, ":")
		d.errorf(n, "%s: {$%s} is Caddyfile syntax, expanded only in a Caddyfile; in routes.yaml write {env.%s}", what, name, name)
		return ""
	}
	// A JSON object (a JWK public key) is a value, not a placeholder.
	if d.expand == nil || s == "" || strings.HasPrefix(s, `{"`) {
		return s
	}
	out, err := d.expand(s)
	if err != nil {
		d.errorf(n, "%s: %v", what, err)
		return ""
	}
	return out
}

// credential is a credential's value: expanded, or under NoSecrets a
// placeholder kept as written once its syntax checks, its source noted as
// unresolved.
func (d *decoder) credential(n *yaml.Node, what string) string {
	if !d.noSecrets || n.Kind != yaml.ScalarNode || !hasPlaceholder(n.Value) {
		return d.expanded(n, what)
	}
	if err := checkPlaceholders(n.Value); err != nil {
		d.errorf(n, "%s: %v", what, err)
		return ""
	}
	if d.unresolved == nil {
		d.unresolved = map[string]bool{}
	}
	d.unresolved[d.source] = true
	return n.Value
}

// placeholderPrefixes are the placeholders a routes.yaml value may take,
// as Caddy's global replacer resolves them.
var placeholderPrefixes = []string{"env.", "file.", "system.", "time."}

// checkPlaceholders checks the syntax of every placeholder in a value
// without resolving it.
func checkPlaceholders(v string) error {
	for rest := v; ; {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			if strings.IndexByte(rest, '}') >= 0 {
				return fmt.Errorf("%q has a } that closes no placeholder", v)
			}
			return nil
		}
		if strings.IndexByte(rest[:open], '}') >= 0 {
			return fmt.Errorf("%q has a } that closes no placeholder", v)
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return fmt.Errorf("%q has an unclosed placeholder", v)
		}
		name := rest[open+1 : open+end]
		if strings.HasPrefix(name, "$") {
			return fmt.Errorf("{%s} is Caddyfile syntax; in routes.yaml write {env.%s}", name, strings.TrimPrefix(name, "$"))
		}
		known := false
		for _, p := range placeholderPrefixes {
			known = known || (strings.HasPrefix(name, p) && len(name) > len(p) && !strings.ContainsAny(name, "{ "))
		}
		if !known {
			return fmt.Errorf("{%s} is not a placeholder routes.yaml takes ({env.NAME}, {file.PATH})", name)
		}
		rest = rest[open+end+1:]
	}
}

// listNodes is a list's items; a scalar stands for a one-item list.
func (d *decoder) listNodes(n *yaml.Node, what string) []*yaml.Node {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return []*yaml.Node{n}
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "%s must be a list", what)
		return nil
	}
	return n.Content
}

// literal notes a credential written out in the file.
func (d *decoder) literal(n *yaml.Node, what string) {
	if n.Kind == yaml.ScalarNode && n.Value != "" && !hasPlaceholder(n.Value) {
		d.literals = append(d.literals, Literal{At: pos(n), What: what, Source: d.source})
	}
}

// hasPlaceholder reports whether a value as written takes any part of itself
// from a placeholder ({env.X}, {file.Y}).
func hasPlaceholder(raw string) bool {
	i := strings.IndexByte(raw, '{')
	return i >= 0 && strings.IndexByte(raw[i:], '}') > 0 && !strings.HasPrefix(raw, `{"`)
}

// fieldNode returns the value under key in a mapping node.
func fieldNode(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
