package config

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestWrittenFormReadsBack: a configuration written out as JSON from its
// fields reads back as the same configuration.
func TestWrittenFormReadsBack(t *testing.T) {
	everyKey, err := os.ReadFile("testdata/every-key.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := Parse("/etc/hookgate/routes.yaml", everyKey, Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := fromFile.Written()
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := ParseJSON("routes", doc, Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	for _, c := range []*Routes{fromFile, fromJSON} {
		c.File, c.paths = "", nil
		clearPositions(reflect.ValueOf(c))
		for i := range c.Literals {
			c.Literals[i].What = ""
		}
	}
	if !reflect.DeepEqual(fromFile, fromJSON) {
		again, _ := fromJSON.Written()
		t.Fatalf("read back differently:\n%s\n---\n%s", doc, again)
	}
	if fromFile.Sources[1].Name != "asana" || !fromJSON.Sources[1].Dedup.Disabled || fromJSON.IPRanges.Refresh.Std().Hours() != 6 {
		t.Fatalf("values lost: %s", doc)
	}
}

// TestCaddyJSONKeepsTheDocument: routes read from Caddy's JSON are written
// back byte for byte, placeholders unexpanded, so no secret reaches
// GET /config/ or autosave.json.
func TestCaddyJSONKeepsTheDocument(t *testing.T) {
	doc := `{"upstreams":{"u":{"url":"http://x"}},"sources":{"s":{"path":"/s","provider":"github","secrets":["{env.GH}"],"default":["u"]}}}`
	var handler struct {
		Routes *Routes `json:"routes"`
	}
	if err := json.Unmarshal([]byte(`{"routes":`+doc+`}`), &handler); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(handler)
	if err != nil || string(out) != `{"routes":`+doc+`}` {
		t.Fatalf("written as %s, %v", out, err)
	}
	cfg, err := ParseJSON("routes", mustWritten(t, handler.Routes), expandEnv(map[string]string{"GH": "expanded-0123456789"}))
	if err != nil || cfg.Sources[0].Secrets[0] != "expanded-0123456789" {
		t.Fatalf("%v %+v", err, cfg)
	}
	if err := json.Unmarshal([]byte(`{"routes":["not", "an", "object"]}`), &handler); err == nil || !strings.Contains(err.Error(), "routes must be a JSON object") {
		t.Fatalf("a list was taken: %v", err)
	}
}

func mustWritten(t *testing.T, r *Routes) []byte {
	t.Helper()
	doc, err := r.Written()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestMisindentedBlockIsOneError: keys written at the level of the
// sources' names are reported once, where the block starts.
func TestMisindentedBlockIsOneError(t *testing.T) {
	doc := "upstreams:\n  app:\n    url: http://x\nsources:\n  stripe:\n  path: /hooks/stripe\n  provider: stripe\n" +
		"  secrets: [whsec_x]\n  default: [app]\n  routes:\n    - when: 'true'\n      to: [app]\n"
	_, err := Parse("routes.yaml", []byte(doc), Options{})
	if err == nil {
		t.Fatal("accepted")
	}
	want := "routes.yaml:5:3: source stripe: its keys are not indented under it (path, provider, secrets, default, routes are at the level of the sources' names); indent them by two more spaces"
	if err.Error() != want {
		t.Fatalf("got:\n%v\nwant:\n%s", err, want)
	}
	// The same slip among upstreams.
	doc = "upstreams:\n  app:\n  url: http://x\n  timeout: 3s\nsources:\n  s:\n    path: /s\n    provider: github\n    secrets: [x-0123456789abcdef]\n"
	if _, err := Parse("routes.yaml", []byte(doc), Options{}); err == nil || strings.Count(err.Error(), "\n") != 0 ||
		!strings.Contains(err.Error(), "routes.yaml:2:3: upstream app: its keys are not indented under it (url, timeout") {
		t.Fatalf("got %v", err)
	}
}

// TestUnknownKeySuggests: an unknown key names the keys known there and
// the closest of them.
func TestUnknownKeySuggests(t *testing.T) {
	cases := map[string]string{
		"storag:\n  path: x\n":                                  `routes.yaml:1:1: routes file: unknown key "storag" (known: alerts, allow_ips, claim, inspector, ip_ranges, logging, max_body, max_inflight_body, max_pending, sources, storage, unfinished_bodies, upstreams); did you mean storage?`,
		"upstreams:\n  u:\n    url: http://x\n    timout: 3s\n": `routes.yaml:4:5: upstream u: unknown key "timout"`,
	}
	for doc, want := range cases {
		_, err := Parse("routes.yaml", []byte(doc+"sources:\n  s:\n    path: /s\n    provider: github\n    secrets: [x-0123456789abcdef]\n"), Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v\nwant %s", err, want)
		}
	}
	_, err := Parse("routes.yaml", []byte("upstreams:\n  u:\n    url: http://x\n    timout: 3s\nsources:\n  s:\n    path: /s\n    provider: github\n    secrets: [x-0123456789abcdef]\n"), Options{})
	if err == nil || !strings.Contains(err.Error(), "did you mean timeout?") {
		t.Errorf("no suggestion: %v", err)
	}
}

// TestYAMLAndJSONNamesAgree: every key has one name, in routes.yaml and in
// Caddy's JSON alike.
func TestYAMLAndJSONNamesAgree(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	n := 0
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || typ.PkgPath() != reflect.TypeFor[Routes]().PkgPath() {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() || f.Anonymous {
				continue
			}
			j, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			y, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if j != y {
				t.Errorf("%s.%s: json %q, yaml %q", typ.Name(), f.Name, j, y)
			}
			if j != "" && j != "-" {
				n++
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[Routes]())
	if n < 100 {
		t.Errorf("only %d keys walked", n)
	}
}
