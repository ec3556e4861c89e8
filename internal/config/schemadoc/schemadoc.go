// Package schemadoc writes what editors and readers learn the routes schema
// from, both taken from config's types and their doc comments: the JSON
// Schema of routes.yaml (docs/routes.schema.json) and the key-by-key
// reference of docs/configuration.md. Its tests fail when either falls
// behind the types; `go test ./internal/config/schemadoc -update` writes
// them anew.
package schemadoc

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/verify"
)

// Docs are the doc comments of config's types and their fields.
type Docs struct {
	types  map[string]string
	fields map[string]map[string]string // type → field → comment
	// examples are values by key path (ReadExamples).
	examples map[string]string
}

// ReadDocs reads the doc comments of the Go package in dir.
func ReadDocs(dir string) (*Docs, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	pkg, err := doc.NewFromFiles(fset, files, "github.com/hookgate/hookgate/internal/config", doc.PreserveAST)
	if err != nil {
		return nil, err
	}
	d := &Docs{types: map[string]string{}, fields: map[string]map[string]string{}}
	for _, t := range pkg.Types {
		d.types[t.Name] = oneLine(t.Doc)
		for _, spec := range t.Decl.Specs {
			st, ok := spec.(*ast.TypeSpec).Type.(*ast.StructType)
			if !ok {
				continue
			}
			fields := map[string]string{}
			for _, f := range st.Fields.List {
				for _, n := range f.Names {
					fields[n.Name] = oneLine(f.Doc.Text())
				}
			}
			d.fields[t.Name] = fields
		}
	}
	return d, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ReadExamples reads routes files that set every key into examples by
// the reference's key paths (sources.<name>.path, alerts[].to): the value
// each first gives the key, written on one line.
func (d *Docs) ReadExamples(files ...string) error {
	d.examples = map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if len(doc.Content) > 0 {
			collectExamples(doc.Content[0], "", d.examples)
		}
	}
	return nil
}

// namedBlocks are the keys whose mapping's keys are names the file
// chooses.
var namedBlocks = map[string]bool{"upstreams": true, "sources": true}

func collectExamples(n *yaml.Node, path string, out map[string]string) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		p := joinPath(path, key)
		if _, seen := out[p]; !seen {
			out[p] = flowLine(val)
		}
		switch {
		case namedBlocks[p] && val.Kind == yaml.MappingNode:
			for j := 1; j < len(val.Content); j += 2 {
				collectExamples(val.Content[j], p+".<name>", out)
			}
		case val.Kind == yaml.SequenceNode:
			for _, item := range val.Content {
				collectExamples(item, p+"[]", out)
			}
		default:
			collectExamples(val, p, out)
		}
	}
}

// flowLine writes a value as YAML on one line.
func flowLine(n *yaml.Node) string {
	c := *n
	setFlow(&c)
	out, err := yaml.Marshal(&c)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func setFlow(n *yaml.Node) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style = yaml.FlowStyle
	}
	for i, child := range n.Content {
		c := *child
		setFlow(&c)
		n.Content[i] = &c
	}
}

// example is a key's example: from the files, else from its tag.
func (d *Docs) example(path string, f field) string {
	if e, ok := d.examples[path]; ok {
		return e
	}
	return f.example
}

// field is one key of a block, as the reference lists it.
type field struct {
	key      string
	goName   string
	typ      reflect.Type
	doc      string
	required bool
	min      string
	positive bool
	enum     []string
	// example is the tag's, for a key the example files leave out.
	example string
}

// fieldsOf lists a struct's keys in declaration order.
func (d *Docs) fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if !sf.IsExported() || name == "" || name == "-" {
			continue
		}
		f := field{key: name, goName: sf.Name, typ: sf.Type, doc: d.fields[t.Name()][sf.Name],
			required: opts == "", min: sf.Tag.Get("min"), positive: sf.Tag.Get("positive") == "true", example: sf.Tag.Get("example")}
		if e := sf.Tag.Get("enum"); e != "" {
			f.enum = strings.Split(e, ",")
		}
		switch t.Name() + "." + sf.Name {
		case "VerifySpec.Algorithm":
			f.enum = verify.Algorithms()
		case "Source.Provider":
			for _, p := range verify.Presets() {
				f.enum = append(f.enum, p.Name)
			}
		}
		out = append(out, f)
	}
	return out
}

// text is a field's comment with its Go name replaced by its key.
func (f field) text() string {
	for _, sep := range []string{" ", ", "} {
		if rest, ok := strings.CutPrefix(f.doc, f.goName+sep); ok {
			return "`" + f.key + "`" + sep + rest
		}
	}
	return f.doc
}

// description is the comment without what the other columns say: the
// default and that the key is required.
func (f field) description() string {
	s := f.text()
	if m := defaultSentence.FindStringSubmatchIndex(s); m != nil {
		s = strings.TrimSpace(s[:m[0]] + " " + s[m[1]:])
	}
	return strings.TrimSpace(strings.TrimSuffix(s, " Required."))
}

// defaultSentence is "Default X." or "Default: X." in a comment, up to the
// full stop that ends the sentence.
var defaultSentence = regexp.MustCompile(`(?:^|\s)Default:? (.*?)\.(?:\s+|$)`)

// defaultOf is what the comment says the default is ("Default 15s.").
func (f field) defaultOf() string {
	if f.required {
		return "required"
	}
	if m := defaultSentence.FindStringSubmatch(f.text()); m != nil {
		return m[1]
	}
	return ""
}

// The value types: their JSON Schema and how the reference names them.
type valueType struct {
	name   string
	schema map[string]any
}

func str() map[string]any { return map[string]any{"type": "string"} }
func oneOrMany(item any) map[string]any {
	return anyOf(item, map[string]any{"type": "array", "items": item})
}
func anyOf(s ...any) map[string]any { return map[string]any{"anyOf": s} }
func stringMap() map[string]any {
	return map[string]any{"type": "object", "additionalProperties": str()}
}

var durationSchema = anyOf(
	map[string]any{"type": "string", "pattern": `^\s*(\{[^}]+\}|([0-9.]+(ns|us|µs|ms|s|m|h|d))+)\s*$`},
	map[string]any{"type": "integer", "minimum": 0})

var values = map[reflect.Type]valueType{
	reflect.TypeFor[config.Duration](): {"duration: `90s`, `1h30m`, `7d12h`, or whole nanoseconds", durationSchema},
	reflect.TypeFor[config.Size](): {"size: `512`, `64KiB`, `5MiB`, `1.5MiB`, `5mb`, `10M`", anyOf(
		map[string]any{"type": "string", "pattern": `^\s*[0-9.]+\s*([kKmMgGtT]i?[bB]?|[bB])?\s*$`},
		map[string]any{"type": "integer", "minimum": 1})},
	reflect.TypeFor[config.Text]():            {"text, placeholders expanded", str()},
	reflect.TypeFor[config.Secret]():          {"secret: `{env.NAME}` or `{file.PATH}`", str()},
	reflect.TypeFor[config.Secrets]():         {"list of secrets, placeholders expanded", oneOrMany(str())},
	reflect.TypeFor[config.Path]():            {"file name, from the routes file's folder", str()},
	reflect.TypeFor[config.Expr]():            {"expression ([expr](#routing))", str()},
	reflect.TypeFor[config.Refs]():            {"list of upstream names", oneOrMany(str())},
	reflect.TypeFor[config.URL]():             {"http(s) URL", map[string]any{"type": "string", "pattern": `^(https?://|\{)`}},
	reflect.TypeFor[config.SecretURL]():       {"http(s) or smtp(s) URL, a credential", map[string]any{"type": "string", "pattern": `^(https?://|smtps?://|\{)`}},
	reflect.TypeFor[config.Time]():            {"RFC 3339 time: `2030-01-02T15:04:05Z`", str()},
	reflect.TypeFor[config.Rate]():            {"rate: `50/s`, `600/m`, `3600/h`", anyOf(map[string]any{"type": "string", "pattern": `^\s*[0-9.]+\s*(/\s*[smh])?\s*$`}, map[string]any{"type": "number", "exclusiveMinimum": 0})},
	reflect.TypeFor[config.Ratio]():           {"number in (0, 1]", map[string]any{"type": "number", "exclusiveMinimum": 0, "maximum": 1}},
	reflect.TypeFor[config.RetryOn]():         {"list of status codes, `4xx`, `5xx`, `network`", oneOrMany(anyOf(map[string]any{"type": "integer", "minimum": 100, "maximum": 599}, map[string]any{"enum": []string{"4xx", "5xx", "network"}}, map[string]any{"type": "string", "pattern": `^[1-5][0-9][0-9]$`}))},
	reflect.TypeFor[config.Schema]():          {"JSON Schema: a file name or inline", anyOf(str(), map[string]any{"type": "object"})},
	reflect.TypeFor[config.AllowIPs]():        {"list of CIDRs, addresses, provider names", map[string]any{"type": "array", "items": str()}},
	reflect.TypeFor[config.Claim]():           {"list of path prefixes", oneOrMany(map[string]any{"type": "string", "pattern": "^/"})},
	reflect.TypeFor[config.CAFiles]():         {"list of PEM files", oneOrMany(str())},
	reflect.TypeFor[config.Proxy]():           {"proxy URL or `env`", map[string]any{"type": "string", "pattern": `^(env$|https?://|socks5h?://|\{)`}},
	reflect.TypeFor[config.DeliveryHeaders](): {"header names to values", stringMap()},
	reflect.TypeFor[config.RouteHeaders]():    {"header names to templates", stringMap()},
	reflect.TypeFor[config.ProviderOptions](): {"option names to values", stringMap()},
	reflect.TypeFor[config.SearchFields]():    {"field names to expressions, at most 8", map[string]any{"type": "object", "maxProperties": config.MaxSearchFields, "propertyNames": map[string]any{"pattern": "^[a-z][a-z0-9_]{0,31}$"}, "additionalProperties": str()}},
	reflect.TypeFor[json.RawMessage]():        {"Caddy's `http` transport, as JSON", map[string]any{"type": "object"}},
	reflect.TypeFor[[]string]():               {"list of strings", oneOrMany(str())},
	reflect.TypeFor[string]():                 {"string", str()},
	reflect.TypeFor[bool]():                   {"true or false", map[string]any{"type": "boolean"}},
	reflect.TypeFor[int]():                    {"whole number", map[string]any{"type": "integer"}},
}

// A block is a struct of the schema, under the key path it is found at.
type block struct {
	path string
	t    reflect.Type
}

// named are the blocks keyed by a name the file chooses, and lists.
var named = map[reflect.Type]struct {
	elem reflect.Type
	key  string // how the reference writes the chosen name
	list bool
}{
	reflect.TypeFor[config.Upstreams]():      {reflect.TypeFor[config.Upstream](), "<name>", false},
	reflect.TypeFor[config.Sources]():        {reflect.TypeFor[config.Source](), "<name>", false},
	reflect.TypeFor[config.Alerts]():         {reflect.TypeFor[config.Alert](), "[]", true},
	reflect.TypeFor[[]*config.Route]():       {reflect.TypeFor[config.Route](), "[]", true},
	reflect.TypeFor[[]*config.ListenToken](): {reflect.TypeFor[config.ListenToken](), "[]", true},
}

func elemType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// schemaOf is the JSON Schema of a value of type t; structs are defined
// once in defs and referred to.
func (d *Docs) schemaOf(t reflect.Type, f *field, defs map[string]any) map[string]any {
	t = elemType(t)
	if v, ok := values[t]; ok {
		s := clone(v.schema)
		if f != nil {
			if len(f.enum) > 0 && t.Kind() == reflect.String {
				s = map[string]any{"enum": f.enum}
			}
			if f.min != "" {
				var n int
				fmt.Sscan(f.min, &n)
				s["minimum"] = n
			}
		}
		return s
	}
	if n, ok := named[t]; ok {
		item := d.schemaOf(n.elem, nil, defs)
		if n.list {
			return map[string]any{"type": "array", "items": item}
		}
		s := map[string]any{"type": "object", "additionalProperties": item}
		if t == reflect.TypeFor[config.Sources]() {
			s["minProperties"] = 1
		}
		return s
	}
	if t.Kind() != reflect.Struct {
		panic("schemadoc: no schema for " + t.String())
	}
	if _, done := defs[t.Name()]; !done {
		defs[t.Name()] = nil // being defined: a cycle refers to it
		defs[t.Name()] = d.structSchema(t, defs)
	}
	ref := map[string]any{"$ref": "#/$defs/" + t.Name()}
	switch t {
	case reflect.TypeFor[config.Dedup]():
		return anyOf(map[string]any{"enum": []any{"off", false}}, ref)
	case reflect.TypeFor[config.Validate]():
		return anyOf(str(), ref)
	}
	return ref
}

func (d *Docs) structSchema(t reflect.Type, defs map[string]any) map[string]any {
	props := map[string]any{}
	var required []string
	for _, f := range d.fieldsOf(t) {
		s := d.schemaOf(f.typ, &f, defs)
		if t == reflect.TypeFor[config.IPRanges]() {
			s = anyOf(s, map[string]any{"enum": []any{"off", false}})
		}
		if desc := f.description(); desc != "" {
			s = withDescription(s, desc)
		}
		props[f.key] = s
		if f.required {
			required = append(required, f.key)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	if doc := d.types[t.Name()]; doc != "" {
		s["description"] = doc
	}
	return s
}

func withDescription(s map[string]any, desc string) map[string]any {
	out := clone(s)
	out["description"] = desc
	return out
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// JSONSchema is the JSON Schema of routes.yaml.
func (d *Docs) JSONSchema() ([]byte, error) {
	defs := map[string]any{}
	root := d.structSchema(reflect.TypeFor[config.Routes](), defs)
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = "https://github.com/hookgate/hookgate/docs/routes.schema.json"
	root["title"] = "Hookgate routes.yaml"
	root["$defs"] = defs
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// Reference is the key-by-key reference: a table per block, each key with
// its type, default and description, then the value types with examples.
func (d *Docs) Reference() string {
	var b strings.Builder
	b.WriteString("Every key, as the types in `internal/config` define it (`go doc ./internal/config Routes`).\n")
	b.WriteString("Editors that read JSON Schema complete and check routes.yaml with [routes.schema.json](routes.schema.json):\n")
	b.WriteString("put `# yaml-language-server: $schema=<path to>/routes.schema.json` on its first line.\n")
	queue := []block{{"", reflect.TypeFor[config.Routes]()}}
	seen := map[reflect.Type]bool{}
	for len(queue) > 0 {
		blk := queue[0]
		queue = queue[1:]
		if blk.path == "" {
			b.WriteString("\n### Top level\n\n")
		} else {
			fmt.Fprintf(&b, "\n### `%s`\n\n", blk.path)
		}
		if doc := d.types[blk.t.Name()]; doc != "" && blk.path != "" {
			b.WriteString(doc + "\n\n")
		}
		b.WriteString("| Key | Type | Default | Example | |\n|---|---|---|---|---|\n")
		for _, f := range d.fieldsOf(blk.t) {
			path := joinPath(blk.path, f.key)
			typ, next := d.typeName(f)
			example := ""
			if next == nil || isScalarOr(elemType(f.typ)) {
				example = code(fit(d.example(path, f), 48))
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", f.key, typ, cell(f.defaultOf()), example, cell(f.description()))
			if next != nil && !seen[next.t] {
				seen[next.t] = true
				next.path = path + next.path
				queue = append(queue, *next)
			}
		}
	}
	b.WriteString("\n### Value types\n\n| Type | Written as |\n|---|---|\n")
	var names []string
	for _, v := range values {
		if strings.Contains(v.name, ":") {
			names = append(names, v.name)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		kind, examples, _ := strings.Cut(n, ": ")
		fmt.Fprintf(&b, "| %s | %s |\n", kind, examples)
	}
	return b.String()
}

// typeName is how the reference names a field's type, and the block it
// leads to, if any.
func (d *Docs) typeName(f field) (string, *block) {
	t := elemType(f.typ)
	if f.goName == "Provider" {
		return "preset name (`hookgate providers`)", nil
	}
	if len(f.enum) > 0 {
		return "one of " + strings.Join(quoteAll(f.enum), ", "), nil
	}
	if v, ok := values[t]; ok {
		kind, _, _ := strings.Cut(v.name, ": ")
		return kind, nil
	}
	if n, ok := named[t]; ok {
		if n.list {
			return "list of blocks", &block{"[]", n.elem}
		}
		return "names to blocks", &block{"." + n.key, n.elem}
	}
	switch t {
	case reflect.TypeFor[config.Dedup]():
		return "block, or `off`", &block{"", t}
	case reflect.TypeFor[config.Validate]():
		return "block, or a schema file", &block{"", t}
	case reflect.TypeFor[config.IPRanges]():
		return "block", &block{"", t}
	}
	return "block", &block{"", t}
}

// isScalarOr reports the blocks that may also be written as one value
// (dedup: off, validate: schema.json), whose example is worth a cell.
func isScalarOr(t reflect.Type) bool {
	return t == reflect.TypeFor[config.Dedup]() || t == reflect.TypeFor[config.Validate]()
}

// code writes an example as inline code in a table cell.
func code(s string) string {
	if s == "" {
		return ""
	}
	s = strings.ReplaceAll(s, "|", `\|`)
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}

// fit cuts s to n runes, marking a cut.
func fit(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = "`" + v + "`"
	}
	return out
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// Keys lists every key path of the schema, for checks.
func (d *Docs) Keys() []string {
	var keys []string
	d.walk(func(path string, _ field) { keys = append(keys, path) })
	return keys
}

// walk visits every key of the schema, block by block.
func (d *Docs) walk(visit func(path string, f field)) {
	queue := []block{{"", reflect.TypeFor[config.Routes]()}}
	seen := map[reflect.Type]bool{}
	for len(queue) > 0 {
		blk := queue[0]
		queue = queue[1:]
		for _, f := range d.fieldsOf(blk.t) {
			path := joinPath(blk.path, f.key)
			visit(path, f)
			if _, next := d.typeName(f); next != nil && !seen[next.t] {
				seen[next.t] = true
				next.path = path + next.path
				queue = append(queue, *next)
			}
		}
	}
}
