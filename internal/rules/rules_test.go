package rules

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/hookgate/hookgate/internal/verify"
)

func mustCondition(t *testing.T, src string) *Program {
	t.Helper()
	p, err := CompileCondition(src)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func jsonBody(t *testing.T, s string) any {
	t.Helper()
	v, err := ParseBody(verify.FormatJSON, []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestConditions(t *testing.T) {
	env := &Env{
		Body:    jsonBody(t, `{"type":"payment_intent.succeeded","data":{"amount":1500,"tags":["a","b"]},"livemode":true}`),
		Headers: map[string]string{"x-github-event": "push", "content-type": "application/json"},
		Query:   map[string]string{"tenant": "acme"},
		Path:    "/webhooks/stripe", Method: "POST", Source: "stripe",
	}
	cases := map[string]bool{
		`body.type startsWith "payment_intent."`:                    true,
		`body.type == "invoice.paid"`:                               false,
		`body.data.amount > 1000`:                                   true,
		`body.data.amount > 1000 and body.livemode`:                 true,
		`"b" in body.data.tags`:                                     true,
		`headers["x-github-event"] == "push"`:                       true,
		`query.tenant == "acme" && source == "stripe"`:              true,
		`path endsWith "/stripe" and method == "POST"`:              true,
		`body.type matches "^payment_intent\\.(succeeded|failed)$"`: true,
		`body?.missing?.deeper == nil`:                              true,
	}
	for src, want := range cases {
		got, err := mustCondition(t, src).Match(env)
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", src, got, err, want)
		}
	}
}

func TestNeedsBody(t *testing.T) {
	if !mustCondition(t, `body.type == "x"`).NeedsBody() {
		t.Error("body.type does not need the body?")
	}
	if mustCondition(t, `headers["x-a"] == "1" and path == "/x"`).NeedsBody() {
		t.Error("a header-only rule claims to need the body")
	}
	key, _ := CompileKey(`headers["x-github-delivery"]`)
	if key.NeedsBody() {
		t.Error("a header key claims to need the body")
	}
}

func TestKeys(t *testing.T) {
	env := &Env{Body: jsonBody(t, `{"id":"evt_1","seq":12345678901,"n":1.5,"flag":true,"obj":{}}`), Headers: map[string]string{"x-id": "h-1"}}
	cases := map[string]string{
		`body.id`:                         "evt_1",
		`body.seq`:                        "12345678901",
		`body.n`:                          "1.5",
		`body.flag`:                       "true",
		`body.absent`:                     "",
		`headers["x-id"]`:                 "h-1",
		`headers["x-nope"]`:               "",
		`body.id + ":" + headers["x-id"]`: "evt_1:h-1",
	}
	for src, want := range cases {
		p, err := CompileKey(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		got, err := p.Key(env)
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", src, got, err, want)
		}
	}
	p, _ := CompileKey(`body.obj`)
	if _, err := p.Key(env); err == nil {
		t.Error("an object as key was accepted")
	}
}

func TestCompileErrors(t *testing.T) {
	for _, src := range []string{`body.type ==`, `path > 5`, `unknownVar == 1`, `len(` + strings.Repeat("1+", 3000) + `1) > 0`} {
		if _, err := CompileCondition(src); err == nil || !strings.HasPrefix(err.Error(), "invalid expression") {
			t.Errorf("%.40s: got %v", src, err)
		}
	}
}

func TestParseBody(t *testing.T) {
	form, err := ParseBody(verify.FormatForm, []byte("a=1&b=two&a=3"))
	if err != nil {
		t.Fatal(err)
	}
	if m := form.(map[string]any); m["a"] != "1" || m["b"] != "two" {
		t.Errorf("form: %v", m)
	}
	arr, err := ParseBody(verify.FormatEither, []byte(" \n[1,2]"))
	if err != nil || len(arr.([]any)) != 2 {
		t.Errorf("array without content type: %v %v", arr, err)
	}
	for _, bad := range []string{"", "plain text", `{"a":`, "id=evt_1", `{"a":1}garbage`} {
		if _, err := ParseBody(verify.FormatJSON, []byte(bad)); err != ErrUnparseable {
			t.Errorf("ParseBody(%q): %v, want ErrUnparseable", bad, err)
		}
	}
	if _, err := ParseBody(verify.FormatForm, []byte("a=%zz")); err != ErrUnparseable {
		t.Errorf("bad form escape: %v", err)
	}
}

func TestDecide(t *testing.T) {
	schema, err := CompileSchema("testdata/invoice.json")
	if err != nil {
		t.Fatal(err)
	}
	table := &Table{
		Default: []string{"legacy"},
		Rules: []Rule{
			{Name: "payments", When: mustCondition(t, `body.type startsWith "payment_intent."`), To: []string{"billing"}},
			{Name: "big", When: mustCondition(t, `body.data.amount > 1000`), To: []string{"billing", "audit"}},
			{Name: "invoices", Schema: schema, To: []string{"invoices"}},
			{Name: "broken", When: mustCondition(t, `body.data.amount / 0 > 1 and int("x") > 0`), To: []string{"never"}},
		},
	}
	cases := []struct {
		body string
		want string
		errs int
	}{
		{`{"type":"payment_intent.created","data":{"amount":10}}`, "billing:payments", 1},
		{`{"type":"payment_intent.created","data":{"amount":5000}}`, "billing:payments audit:big", 1},
		{`{"type":"invoice.paid","data":{"amount":5}}`, "invoices:invoices", 1},
		{`{"type":"invoice.paid","data":{"amount":-5}}`, "legacy:default", 0},
		{`{"type":"customer.created"}`, "legacy:default", 2},
	}
	for _, c := range cases {
		dests, errs := table.Decide(&Env{Body: jsonBody(t, c.body)})
		var got []string
		for _, d := range dests {
			got = append(got, d.Upstream+":"+d.Route)
		}
		for _, err := range errs {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("evaluation error spans lines: %q", err)
			}
		}
		if strings.Join(got, " ") != c.want || len(errs) != c.errs {
			t.Errorf("%s: %v (errors %v), want %s with %d errors", c.body, got, errs, c.want, c.errs)
		}
	}
	if dests, _ := (&Table{}).Decide(&Env{}); len(dests) != 0 {
		t.Errorf("no rules, no default: %v", dests)
	}
}

func TestJSONPathAndTemplates(t *testing.T) {
	body := jsonBody(t, `{"data":{"items":[{"id":"a"},{"id":"b","tags":["x","y"]}],"n":3}}`)
	cases := map[string]any{
		"data.items[1].id":        "b",
		"$.data.items[1].tags[1]": "y",
		".data.n":                 3,
		"data.items[5].id":        nil,
		"data.missing.deeper":     nil,
		"data.items[x]":           nil,
		"data.n.x":                nil,
	}
	for path, want := range cases {
		if got := JSONPath(body, path); got != want {
			t.Errorf("JSONPath(%q) = %v, want %v", path, got, want)
		}
	}
	prog, err := CompileCondition(`jsonpath(body, "data.items[0].id") == "a" && hasPrefix(source, "str")`)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := prog.Match(&Env{Body: body, Source: "stripe"}); !ok || err != nil {
		t.Fatalf("jsonpath in an expression: %v %v", ok, err)
	}
	tpl, err := CompileTemplate("/tenants/{query.t}/{jsonpath(body, \"data.items[1].id\")}/{body.data.n}")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.Render(&Env{Body: body, Query: map[string]string{"t": "a b/c"}}, url.PathEscape)
	if err != nil || got != "/tenants/a%20b%2Fc/b/3" {
		t.Fatalf("template: %q %v", got, err)
	}
	if _, err := CompileTemplate("/x/{body"); err == nil {
		t.Fatal("an unclosed template compiled")
	}
}

func TestStopAndShapeNeedBody(t *testing.T) {
	stop := &Table{Rules: []Rule{
		{Name: "first", When: mustCondition(t, "true"), To: []string{"a"}, Stop: true},
		{Name: "second", When: mustCondition(t, "true"), To: []string{"b"}},
	}}
	dests, trace := stop.Trace(&Env{})
	if len(dests) != 1 || dests[0].Upstream != "a" || len(trace) != 1 {
		t.Fatalf("stop: %v %v", dests, trace)
	}
	tpl, _ := CompileTemplate("/x/{body.id}")
	withShape := &Table{Rules: []Rule{{Name: "r", When: mustCondition(t, `headers["a"] == "1"`), To: []string{"a"}, Shape: &Shape{Path: tpl}}}}
	if !withShape.NeedsBody() {
		t.Fatal("a path template reading the body does not make the table need it")
	}
}

func TestExtractKeyMatchesAFullParse(t *testing.T) {
	bodies := []string{
		`{"id":"evt_1","type":"x","data":{"object":{"id":"pi_1","amount":1500}}}`,
		`{"type":"x","nested":{"id":"wrong"},"id":12345678901}`,
		`{"event-data":{"id":"mg_1"},"signature":{}}`,
		`{"id":null}`,
		`{"other":1}`,
		`[1,2]`,
		`{"id":true,"flag":false}`,
		`{"id":1.5e3}`,
	}
	exprs := []string{`body.id`, `body?.id`, `body.data.object.id`, `body["event-data"]?.id`, `body.data.object.amount`}
	for _, src := range exprs {
		p, err := CompileKey(src)
		if err != nil {
			t.Fatal(err)
		}
		path, ok := p.BodyPath()
		if !ok {
			t.Fatalf("%s: no body path", src)
		}
		for _, b := range bodies {
			parsed, _ := ParseBody(verify.FormatJSON, []byte(b))
			want, err := p.Key(&Env{Body: parsed})
			if err != nil {
				want = "" // a failed expression is no key
			}
			got, ok := ExtractKey([]byte(b), path)
			if !ok || got != want {
				t.Errorf("%s on %s: fast %q (%v), parsed %q", src, b, got, ok, want)
			}
		}
	}
	if _, ok := ExtractKey([]byte(`{"id":"x"`), []string{"id"}); ok {
		t.Error("truncated JSON accepted")
	}
	for _, src := range []string{`headers["x-id"]`, `body.id + "x"`, `body`, `string(body.id)`} {
		p, _ := CompileKey(src)
		if _, ok := p.BodyPath(); ok {
			t.Errorf("%s taken for a plain body path", src)
		}
	}
}

// FuzzExtractKey checks the dedup fast path against a full parse on random
// bodies: both must agree whenever the body is JSON.
func FuzzExtractKey(f *testing.F) {
	f.Add([]byte(`{"id":"evt_1","data":{"object":{"id":"pi_1"}}}`))
	f.Add([]byte(`{"id":12.50,"id":"dup"}`))
	f.Add([]byte(`[{"id":1}]`))
	f.Add([]byte(`{"data":null}`))
	f.Add([]byte(`{"\u0069d":"\ud83d\ude00\ud800x","data":{"object":{"id":-0.0e1,"id":12}}}`))
	f.Add([]byte("{\"id\":\"a\xffb\",\"data\":[{\"object\":1}]}"))
	progs := map[string]*Program{}
	for _, src := range []string{`body.id`, `body.data.object.id`} {
		p, err := CompileKey(src)
		if err != nil {
			f.Fatal(err)
		}
		progs[src] = p
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for src, p := range progs {
			path, _ := p.BodyPath()
			fast, ok := ExtractKey(body, path)
			if ok != json.Valid(body) {
				t.Fatalf("%s: ok %v on %q, json.Valid says otherwise", src, ok, body)
			}
			parsed, err := ParseBody(verify.FormatJSON, body)
			if !ok {
				if err == nil {
					t.Fatalf("%s: fast path refused JSON the parser took: %q", src, body)
				}
				continue
			}
			if err != nil {
				continue // JSON, but not an object or array: no key either way
			}
			want, kerr := p.Key(&Env{Body: parsed})
			if kerr != nil {
				want = ""
			}
			if fast != want {
				t.Fatalf("%s on %q: fast %q, parsed %q", src, body, fast, want)
			}
		}
	})
}

// FuzzCompile compiles random expressions and templates: errors are fine,
// panics are not.
func FuzzCompile(f *testing.F) {
	f.Add(`body.type startsWith "a" && headers["x"] == "1"`)
	f.Add(`jsonpath(body, "a.b[0]")`)
	f.Add(`/x/{body.id}/{query.t}`)
	f.Fuzz(func(t *testing.T, src string) {
		if p, err := CompileCondition(src); err == nil {
			p.Match(&Env{Body: map[string]any{"type": "a"}})
		}
		if tpl, err := CompileTemplate(src); err == nil {
			tpl.Render(&Env{}, nil)
		}
		ParseBody(verify.FormatForm, []byte(src))
		ParseBody(verify.FormatJSON, []byte(src))
	})
}

// FuzzSchema compiles random JSON Schemas and matches random bodies with
// the ones that compile: no panic, no hang.
func FuzzSchema(f *testing.F) {
	f.Add(`{"type":"object","required":["type"],"properties":{"type":{"enum":["a","b"]}}}`, `{"type":"a"}`)
	f.Add(`{"$defs":{"n":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/n"}]}},"$ref":"#/$defs/n"}`, `null`)
	f.Add(`{"pattern":"^(a+)+$","maxLength":64}`, `"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"`)
	f.Fuzz(func(t *testing.T, schema, body string) {
		if strings.Contains(schema, "file:") || strings.Contains(schema, "://") {
			return // a schema may load files the operator names; not this test's business
		}
		var doc any
		if json.Unmarshal([]byte(schema), &doc) != nil {
			return
		}
		s, err := CompileInlineSchema("fuzz", doc)
		if err != nil {
			return
		}
		if v, err := ParseBody(verify.FormatJSON, []byte(body)); err == nil {
			s.Match(v)
		}
	})
}
