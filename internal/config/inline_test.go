package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const inlineRoutes = `
storage:
  path: ./data/hookgate.db   # relative to this file
  retention: 7d
max_body: 1MiB
claim: [/hooks/]
upstreams:
  legacy:
    url: http://127.0.0.1:9000
    timeout: 3s
    concurrency: 4
    retry: {max_attempts: 3, initial_interval: 1s, max_interval: 1m}
sources:
  zeta:
    path: /hooks/zeta
    provider: github
    secrets: ["{env.GH_SECRET}", "plain-secret-0123456789"]
    default: [legacy]
    routes:
      - name: invoices
        schema: schemas/invoice.yaml
        to: [legacy]
      - name: big
        when: |
          body.amount > 100 &&
          body.currency == "eur"
        to: [legacy]
  alpha:
    path: /hooks/alpha
    verify:
      algorithm: hmac-sha256
      header: X-Sig
      encoding: hex
      content: "{body}"
    secrets: [s3cret-0123456789]
    validate: schemas/invoice.yaml
    dedup: {key: 'headers["x-id"]', window: 1h}
    default: [legacy]
`

func writeRoutes(t *testing.T) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "schemas"), 0o755); err != nil {
		t.Fatal(err)
	}
	schema := "type: object\nrequired: [id]\nproperties:\n  id: {type: string}\n"
	if err := os.WriteFile(filepath.Join(dir, "schemas", "invoice.yaml"), []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "routes.yaml")
	return path, []byte(inlineRoutes)
}

// clearPositions zeroes every Pos and the file name, which differ between a
// file and its JSON form by design.
func clearPositions(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			clearPositions(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(Pos{}) || v.Type() == reflect.TypeOf(Located{}) {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				clearPositions(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			clearPositions(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			clearPositions(v.MapIndex(k))
		}
	}
}

// The JSON a Caddyfile carries configures exactly what the file does.
func TestInlineMeansWhatTheFileMeans(t *testing.T) {
	path, data := writeRoutes(t)
	fromFile, err := Parse(path, data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	inline, err := Inline(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(inline) {
		t.Fatalf("not JSON: %s", inline)
	}
	fromJSON, err := ParseJSON("webhook_gateway", inline, Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, inline)
	}
	if fromFile.Sources[0].Routes[0].Schema.File == "" || fromJSON.Sources[0].Routes[0].Schema.Doc == nil {
		t.Fatalf("schema file not inlined: %s", inline)
	}
	// Inlining turns the schema file into the document it held.
	for _, c := range []*Routes{fromFile, fromJSON} {
		c.File, c.paths = "", nil
		clearPositions(reflect.ValueOf(c))
		for i := range c.Literals {
			c.Literals[i].What = "" // JSON names the key by its path
		}
	}
	for _, src := range fromFile.Sources {
		for _, r := range src.Routes {
			if r.Schema.File != "" {
				r.Schema.File, r.Schema.Doc = "", map[string]any{"type": "object", "required": []any{"id"}, "properties": map[string]any{"id": map[string]any{"type": "string"}}}
			}
		}
		if v := src.Validate; v != nil && v.Schema.File != "" {
			v.Schema.File, v.Schema.Doc = "", map[string]any{"type": "object", "required": []any{"id"}, "properties": map[string]any{"id": map[string]any{"type": "string"}}}
		}
	}
	if !reflect.DeepEqual(fromFile, fromJSON) {
		a, _ := json.MarshalIndent(fromFile, "", " ")
		b, _ := json.MarshalIndent(fromJSON, "", " ")
		t.Fatalf("file and JSON differ:\n%s\n---\n%s", a, b)
	}
	if fromJSON.Sources[0].Name != "zeta" {
		t.Fatalf("source order lost: %s first", fromJSON.Sources[0].Name)
	}
	if want := filepath.Join(filepath.Dir(path), "data", "hookgate.db"); string(fromJSON.Storage.Path) != want {
		t.Fatalf("storage path %q, want %q", fromJSON.Storage.Path, want)
	}
	if !strings.Contains(string(inline), `"{env.GH_SECRET}"`) {
		t.Fatalf("placeholder not kept as written: %s", inline)
	}
}

func TestInlineReportsFileLine(t *testing.T) {
	path, data := writeRoutes(t)
	data = []byte(strings.Replace(string(data), "schemas/invoice.yaml\n        to", "schemas/missing.json\n        to", 1))
	_, err := Inline(path, data)
	if err == nil || !strings.Contains(err.Error(), path+":21:17: schema: open ") {
		t.Fatalf("got %v", err)
	}
}

func TestJSONErrorsNameThePath(t *testing.T) {
	doc := `{"upstreams":{"legacy":{"url":"http://127.0.0.1:1"}},"sources":{"s":{"path":"/h","provider":"github","secrets":["x"],"default":["legacyy"]},"t":{"path":"/t","provider":"github","secrets":["x"],"default":["legacy"],"tolerance":"soon"}}}`
	_, err := ParseJSON("webhook_gateway routes", []byte(doc), Options{})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		`webhook_gateway routes: sources.s.default: unknown upstream "legacyy"`,
		`webhook_gateway routes: sources.t.tolerance: `,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
