package schemadoc

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/hookgate/hookgate/internal/assemble"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
)

var update = flag.Bool("update", false, "write docs/routes.schema.json and the reference in docs/configuration.md anew")

const (
	schemaFile    = "../../../docs/routes.schema.json"
	referenceFile = "../../../docs/configuration.md"
	referenceFrom = "<!-- The reference below is written by `go test ./internal/config/schemadoc -update` from the types' doc comments. -->\n"
	referenceTo   = "<!-- End of the written reference. -->\n"
)

// exampleFiles set every key, and load: the reference's examples come
// from them.
var exampleFiles = []string{"../testdata/every-key.yaml"}

func readDocs(t *testing.T) *Docs {
	t.Helper()
	d, err := ReadDocs("..")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.ReadExamples(exampleFiles...); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestEveryKeyHasAnExample: each key that is one value has an example in
// the reference, from a routes file the tests load or from its tag.
func TestEveryKeyHasAnExample(t *testing.T) {
	d := readDocs(t)
	d.walk(func(path string, f field) {
		if _, next := d.typeName(f); next != nil && !isScalarOr(elemType(f.typ)) {
			return
		}
		if d.example(path, f) == "" {
			t.Errorf("%s has no example: set it in testdata/every-key.yaml, or give it an example tag", path)
		}
		if f.example != "" {
			checkExample(t, d, path, f)
		}
	})
}

// checkExample holds an example tag to its key's schema.
func checkExample(t *testing.T, d *Docs, path string, f field) {
	t.Helper()
	raw, err := json.Marshal(d.schemaOf(f.typ, &f, map[string]any{}))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("key.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("key.json")
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := schema.Validate(asJSON(t, []byte(f.example))); err != nil {
		t.Errorf("%s: the example %q fails the key's schema: %v", path, f.example, err)
	}
}

// TestJSONSchemaIsCurrent: the committed schema is the one the types give.
func TestJSONSchemaIsCurrent(t *testing.T) {
	want, err := readDocs(t).JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(schemaFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("docs/routes.schema.json is not what the types give: run go test ./internal/config/schemadoc -update")
	}
}

// TestReferenceIsCurrent: docs/configuration.md carries the reference the
// types give, and so every key of them.
func TestReferenceIsCurrent(t *testing.T) {
	d := readDocs(t)
	want := d.Reference()
	data, err := os.ReadFile(referenceFile)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	from, to := strings.Index(text, referenceFrom), strings.Index(text, referenceTo)
	if from < 0 || to < from {
		t.Fatalf("docs/configuration.md lacks the reference's markers")
	}
	got := text[from+len(referenceFrom) : to]
	if *update {
		text = text[:from+len(referenceFrom)] + want + text[to:]
		if err := os.WriteFile(referenceFile, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		got = want
	}
	if got != want {
		t.Fatalf("the reference in docs/configuration.md is not what the types give: run go test ./internal/config/schemadoc -update")
	}
	// Every key has a row, its description and a type.
	for _, key := range d.Keys() {
		name := key[strings.LastIndexAny(key, ".]")+1:]
		if !strings.Contains(got, "| `"+name+"` | ") {
			t.Errorf("key %s has no row in the reference", key)
		}
	}
	if n := len(d.Keys()); n < 100 {
		t.Errorf("only %d keys found", n)
	}
}

// TestEveryKeyIsDocumented: every key of the schema has a doc comment.
func TestEveryKeyIsDocumented(t *testing.T) {
	n := 0
	readDocs(t).walk(func(path string, f field) {
		n++
		if f.doc == "" {
			t.Errorf("%s (%s) has no doc comment", path, f.goName)
		}
	})
	if n < 100 {
		t.Errorf("only %d keys walked", n)
	}
}

// compiled is the committed schema, ready to check documents.
func compiled(t *testing.T) *jsonschema.Schema {
	t.Helper()
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("routes.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("routes.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// asJSON reads a YAML document as the JSON value a schema checks.
func asJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// load reads and assembles a routes file as the gateway does.
func load(t *testing.T, data []byte) error {
	cfg, err := config.Parse(filepath.Join(t.TempDir(), "routes.yaml"), data, config.Options{})
	if err != nil {
		return err
	}
	_, err = assemble.Config(cfg, ingest.Hooks{})
	return err
}

// TestSchemaAcceptsWhatTheGatewayAccepts: the routes files the repository
// ships, and one setting every key, load and satisfy the schema.
func TestSchemaAcceptsWhatTheGatewayAccepts(t *testing.T) {
	s := compiled(t)
	files, _ := filepath.Glob("../../../examples/*.yaml")
	cluster, _ := filepath.Glob("../../../examples/cluster/*.yaml")
	files = append(files, cluster...)
	if len(files) == 0 {
		t.Fatal("no example routes files")
	}
	files = append(files, "../testdata/every-key.yaml")
	docs := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte("sources:")) {
			continue
		}
		docs[f] = data
	}
	for name, data := range docs {
		if err := load(t, data); err != nil {
			t.Errorf("%s does not load: %v", name, err)
		}
		if err := s.Validate(asJSON(t, data)); err != nil {
			t.Errorf("%s fails the schema: %v", name, err)
		}
	}
}

// TestSchemaRefusesWhatTheGatewayRefuses: misspelt keys, wrong kinds and
// values outside a key's set fail the schema as they fail loading.
func TestSchemaRefusesWhatTheGatewayRefuses(t *testing.T) {
	s := compiled(t)
	base := "upstreams:\n  app:\n    url: http://127.0.0.1:9000\nsources:\n  s:\n    path: /s\n    provider: github\n    secrets: [x-0123456789abcdef]\n    default: [app]\n"
	bad := map[string]string{
		"misspelt top-level key": "storag: {path: x}\n" + base,
		"misspelt source key":    strings.Replace(base, "    default:", "    defualt:", 1),
		"unknown provider":       strings.Replace(base, "provider: github", "provider: githb", 1),
		"mode outside its set":   base + "    mode: staging\n",
		"concurrency below 1":    strings.Replace(base, "    url: http://127.0.0.1:9000\n", "    url: http://127.0.0.1:9000\n    concurrency: 0\n", 1),
		"ratio above 1":          base + "alerts:\n  - {name: a, to: 'http://x', on: {rejected: {ratio: 2}}}\n",
		"route without to":       base + "    routes:\n      - when: 'true'\n",
		"duration in words":      strings.Replace(base, "    url: http://127.0.0.1:9000\n", "    url: http://127.0.0.1:9000\n    timeout: five seconds\n", 1),
		"no sources":             "upstreams:\n  app:\n    url: http://x\n",
	}
	for name, doc := range bad {
		if err := load(t, []byte(doc)); err == nil {
			t.Errorf("%s: the gateway loads it", name)
		}
		if err := s.Validate(asJSON(t, []byte(doc))); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
	}
	if err := s.Validate(asJSON(t, []byte(base))); err != nil {
		t.Fatalf("the base document fails: %v", err)
	}
}
