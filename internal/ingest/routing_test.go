package ingest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/assemble"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/rules"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/store/bolt"
	"github.com/hookgate/hookgate/internal/verify"
)

const routingYAML = `
upstreams:
  billing:
    url: http://127.0.0.1:1
  crm:
    url: http://127.0.0.1:2
  legacy:
    url: http://127.0.0.1:3
  audit:
    url: http://127.0.0.1:4
sources:
  gh:
    path: /gh
    provider: github
    secrets: [s-0123456789abcdef]
    routes:
      - name: vip
        when: 'jsonpath(body, "customer.tier") == "vip"'
        to: [crm]
        stop: true
      - name: payments
        when: 'hasPrefix(body.type, "payment.")'
        to: [billing]
        path: '/payments/{body.type}'
        set_headers:
          X-Tenant: '{query.tenant}'
          X-Provider: '{provider}'
        remove_headers: [X-Hub-Signature-256]
      - name: invoices
        schema:
          type: object
          required: [type, amount]
          properties:
            type: {const: invoice.paid}
            amount: {type: number, minimum: 0}
        to: [billing, audit]
        transform: '{"kind": "invoice", "cents": body.amount * 100, "at": received_at.Unix()}'
  gated:
    path: /gated
    provider: github
    secrets: [s-0123456789abcdef]
    validate:
      schema:
        type: object
        required: [id]
    default: [legacy]
  parked:
    path: /parked
    provider: github
    secrets: [s-0123456789abcdef]
    validate:
      schema: {type: object, required: [id]}
      quarantine: true
    default: [legacy]
  nowhere:
    path: /nowhere
    provider: github
    secrets: [s-0123456789abcdef]
    routes:
      - when: 'body.kind == "never"'
        to: [legacy]
`

func routingHarness(t testing.TB, yaml string) (*harness, string) {
	t.Helper()
	dbPath := filepath.Join(t.TempDir(), "h.db")
	return routingHarnessAt(t, yaml, dbPath), dbPath
}

func routingHarnessAt(t testing.TB, yaml, dbPath string) *harness {
	t.Helper()
	cfg, err := config.Parse("routes.yaml", []byte(yaml), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := bolt.Open(dbPath, bolt.Options{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p.Attach(st, nil, func() time.Time { return testNow })
	return &harness{p: p, store: st}
}

func (h *harness) post(t *testing.T, target, body string) (int, string) {
	t.Helper()
	hdr := sign(t, "github", "s-0123456789abcdef", []byte(body))
	hdr.Set("X-GitHub-Delivery", fmt.Sprint(time.Now().UnixNano()))
	hdr.Set("X-Hub-Signature", "legacy")
	rec := h.do("POST", target, hdr, []byte(body))
	return rec.Code, rec.Header().Get("Hookgate-Event-Id")
}

func (h *harness) deliveriesOf(t *testing.T, id string) []store.Delivery {
	t.Helper()
	eid, err := store.ParseID(id)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := h.store.Event(eid)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Deliveries
}

func upstreamsOf(ds []store.Delivery) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Upstream+":"+d.Route)
	}
	return strings.Join(out, " ")
}

func TestRoutingRules(t *testing.T) {
	h, _ := routingHarness(t, routingYAML)
	cases := []struct {
		name, body, want string
	}{
		{"stop ends evaluation", `{"type":"payment.succeeded","customer":{"tier":"vip"}}`, "crm:vip"},
		{"fan-out by expression", `{"type":"payment.refunded","customer":{"tier":"basic"}}`, "billing:payments"},
		{"schema match fans out", `{"type":"invoice.paid","amount":12.5}`, "billing:invoices audit:invoices"},
		{"schema mismatch, no default", `{"type":"invoice.paid","amount":-1}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, id := h.post(t, "/gh?tenant=acme", c.body)
			if code != 200 {
				t.Fatalf("status %d", code)
			}
			if got := upstreamsOf(h.deliveriesOf(t, id)); got != c.want {
				t.Fatalf("deliveries %q, want %q", got, c.want)
			}
		})
	}
}

func TestRouteShaping(t *testing.T) {
	h, _ := routingHarness(t, routingYAML)
	_, id := h.post(t, "/gh?tenant=acme", `{"type":"payment.succeeded","customer":{"tier":"basic"}}`)
	d := h.deliveriesOf(t, id)[0]
	if d.Path != "/payments/payment.succeeded" || d.SetHeaders["X-Tenant"] != "acme" || d.SetHeaders["X-Provider"] != "github" ||
		len(d.RemoveHeaders) != 1 || d.Transformed {
		t.Fatalf("shaping: %+v", d)
	}
	_, id = h.post(t, "/gh", `{"type":"invoice.paid","amount":12.5}`)
	tasks, _ := h.store.Due("audit", testNow.Add(time.Hour), 10)
	if len(tasks) != 1 || tasks[0].Event.ID.String() != id {
		t.Fatalf("audit tasks: %+v", tasks)
	}
	var got map[string]any
	if err := json.Unmarshal(tasks[0].Body, &got); err != nil {
		t.Fatalf("transformed body %q: %v", tasks[0].Body, err)
	}
	if got["kind"] != "invoice" || got["cents"] != 1250.0 || got["at"] != float64(testNow.Unix()) {
		t.Fatalf("transformed body %v", got)
	}
	if string(tasks[0].Event.Body) != `{"type":"invoice.paid","amount":12.5}` {
		t.Fatal("the original body was not kept")
	}
}

func TestUnparseableBodyMatchesNoRule(t *testing.T) {
	yaml := strings.Replace(routingYAML, "    routes:\n      - name: vip", "    default: [legacy]\n    routes:\n      - name: vip", 1)
	h, _ := routingHarness(t, yaml)
	code, id := h.post(t, "/gh", "not json at all")
	if code != 200 {
		t.Fatalf("status %d, want 200 (rules do not match, the default takes it)", code)
	}
	if got := upstreamsOf(h.deliveriesOf(t, id)); got != "legacy:default" {
		t.Fatalf("deliveries %q", got)
	}
	if c := h.p.Counts(); c.Unparseable != 1 {
		t.Fatalf("counters %+v", c)
	}
	// A dedup key that reads the body still needs it parsed: 400.
	strict := strings.Replace(yaml, "    provider: github\n    secrets: [s-0123456789abcdef]\n    default: [legacy]\n    routes:", "    provider: github\n    secrets: [s-0123456789abcdef]\n    dedup:\n      key: body.id\n    default: [legacy]\n    routes:", 1)
	h2, _ := routingHarness(t, strict)
	if code, _ := h2.post(t, "/gh", "not json"); code != 400 {
		t.Fatalf("dedup on an unparseable body: %d, want 400", code)
	}
}

func TestValidationGate(t *testing.T) {
	h, _ := routingHarness(t, routingYAML)
	if code, _ := h.post(t, "/gated", `{"no_id":true}`); code != 400 {
		t.Fatalf("gate: %d, want 400", code)
	}
	if code, _ := h.post(t, "/gated", `{"id":"x"}`); code != 200 {
		t.Fatalf("gate, valid body: %d", code)
	}
	code, id := h.post(t, "/parked", `{"no_id":true}`)
	if code != 200 || id == "" {
		t.Fatalf("quarantine: %d %q", code, id)
	}
	eid, _ := store.ParseID(id)
	rec, _ := h.store.Event(eid)
	if rec.Event.Quarantined == "" || len(rec.Deliveries) != 0 {
		t.Fatalf("quarantined event: %+v, %d deliveries", rec.Event, len(rec.Deliveries))
	}
	if _, err := h.p.Reroute(context.Background(), eid); err == nil || !strings.Contains(err.Error(), "still fails") {
		t.Fatalf("releasing an event that still fails the schema: %v", err)
	}
}

func TestUnroutedEventsRouteOnceARuleExists(t *testing.T) {
	h, db := routingHarness(t, routingYAML)
	code, id := h.post(t, "/nowhere", `{"kind":"order"}`)
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	eid, _ := store.ParseID(id)
	rec, _ := h.store.Event(eid)
	if !rec.Event.Unrouted || len(rec.Deliveries) != 0 {
		t.Fatalf("unrouted event: %+v", rec.Event)
	}
	if targets, err := h.p.Reroute(context.Background(), eid); err != nil || len(targets) != 0 {
		t.Fatalf("reroute with the same rules: %v %v", targets, err)
	}
	h.store.Close()
	// The operator adds a rule; the stored event can now be routed.
	fixed := strings.Replace(routingYAML, `when: 'body.kind == "never"'`, `when: 'body.kind == "order"'`, 1)
	h2 := routingHarnessAt(t, fixed, db)
	targets, err := h2.p.Reroute(context.Background(), eid)
	if err != nil || len(targets) != 1 || targets[0].Upstream != "legacy" {
		t.Fatalf("reroute: %v %v", targets, err)
	}
	rec, _ = h2.store.Event(eid)
	if rec.Event.Unrouted || len(rec.Deliveries) != 1 {
		t.Fatalf("after reroute: %+v", rec)
	}
	if _, err := h2.p.Reroute(context.Background(), eid); !errors.Is(err, ingest.ErrRouted) {
		t.Fatalf("second reroute: %v", err)
	}
}

func TestRoutingConfigErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"type":`), 0o600)
	cases := map[string]string{
		"      - when: 'true'\n        to: [u]\n        path: '/x/{body.'\n":            "routes.yaml:12:15: route line 10: path: unclosed {",
		"      - when: 'true'\n        to: [u]\n        transform: '{\"a\": '\n":        "routes.yaml:12:20: route line 10: transform: invalid expression",
		"      - schema: {type: 12}\n        to: [u]\n":                                 "routes.yaml:10:17: route line 10: inline schema: \"inline:///s-route-10.json#\" is not valid against metaschema",
		"      - schema: ./bad.json\n        to: [u]\n":                                 "routes.yaml:10:17: route line 10: schema ",
		"      - when: 'true'\n        to: [u]\n        set_headers: {Host: x}\n":       "set_headers: Host cannot be set",
		"      - when: 'true'\n        to: [u]\n        path: relative\n":               "path must start with /",
		"      - when: 'true'\n        to: [u]\n        set_headers: {X-A: '{nope}'}\n": "set_headers.X-A: invalid expression",
	}
	for rules, want := range cases {
		yaml := "upstreams:\n  u:\n    url: http://x\nsources:\n  s:\n    path: /h\n    provider: github\n    secrets: [s-0123456789abcdef]\n    routes:\n" + rules
		yaml = strings.Replace(yaml, "    routes:\n", "    routes:\n", 1)
		cfg, err := config.Parse(filepath.Join(dir, "routes.yaml"), []byte(strings.Replace(yaml, "provider: github\n    secrets: [s-0123456789abcdef]\n    routes:", "provider: github\n    secrets: [s-0123456789abcdef]\n    routes:", 1)), config.Options{})
		if err == nil {
			_, err = compile(cfg)
		}
		if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(want, "routes.yaml")) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q:\n got %v\nwant %s", rules, err, want)
		}
	}
}

// BenchmarkRouteTwentyRules evaluates a source with 20 rules on a parsed
// Stripe-like event: the cost routing adds to each request.
func BenchmarkRouteTwentyRules(b *testing.B) {
	var list []rules.Rule
	for i := range 20 {
		prog, err := rules.CompileCondition(fmt.Sprintf(`body.type == "type.%d" && body.data.object.amount > %d`, i, i*10))
		if err != nil {
			b.Fatal(err)
		}
		list = append(list, rules.Rule{Name: fmt.Sprint(i), When: prog, To: []string{fmt.Sprint("u", i%4)}})
	}
	table := &rules.Table{Rules: list, Default: []string{"legacy"}}
	body, _ := rules.ParseBody(verify.FormatJSON, []byte(`{"id":"evt_1","type":"type.19","data":{"object":{"amount":5000,"currency":"usd"}}}`))
	env := &rules.Env{Body: body, Headers: map[string]string{"content-type": "application/json"}, Source: "stripe"}
	b.ReportAllocs()
	for b.Loop() {
		dests, _ := table.Decide(env)
		if len(dests) != 1 {
			b.Fatalf("%d destinations", len(dests))
		}
	}
}

// TestDedupFastPath: a source whose dedup key is a plain body path reads it
// from the bytes, with the same results as a full parse, forms included.
func TestDedupFastPath(t *testing.T) {
	const yaml = "upstreams:\n  u:\n    url: http://x\nsources:\n  s:\n    path: /s\n    provider: slack\n    secrets: [slack-secret-0123456789]\n    default: [u]\n"
	h, _ := routingHarness(t, yaml)
	if dedupPath, needsEnv := h.p.FastPath("/s"); dedupPath == nil || needsEnv {
		t.Fatalf("fast path not taken: %v %v", dedupPath, needsEnv)
	}
	send := func(contentType, body string) (int, string) {
		hdr := signWith(t, "slack", "slack-secret-0123456789", []byte(body), "")
		hdr.Set("Content-Type", contentType)
		rec := h.do("POST", "/s", hdr, []byte(body))
		return rec.Code, rec.Header().Get("Hookgate-Duplicate")
	}
	if code, dup := send("application/json", `{"type":"event_callback","event_id":"Ev1"}`); code != 200 || dup != "" {
		t.Fatalf("first: %d %q", code, dup)
	}
	if code, dup := send("application/json", `{"event_id":"Ev1","type":"event_callback"}`); code != 200 || dup != "true" {
		t.Fatalf("same event id: %d %q", code, dup)
	}
	// A slash command is a form without an event id: its digest is the
	// key, so a second copy of the same bytes is a duplicate, and another
	// command is not.
	for i, want := range []string{"", "true"} {
		if code, dup := send("application/x-www-form-urlencoded", "command=%2Fdeploy&text=now&trigger_id=1"); code != 200 || dup != want {
			t.Fatalf("form %d: %d %q", i, code, dup)
		}
	}
	if code, dup := send("application/x-www-form-urlencoded", "command=%2Fdeploy&text=now&trigger_id=2"); code != 200 || dup != "" {
		t.Fatalf("another form: %d %q", code, dup)
	}
	if code, _ := send("application/json", `{"event_id":`); code != 400 {
		t.Fatalf("broken JSON: %d, want 400", code)
	}
}

// compile builds a configuration's pipeline.
func compile(cfg *config.Routes) (*ingest.Pipeline, error) {
	parts, err := assemble.Config(cfg, ingest.Hooks{})
	if err != nil {
		return nil, err
	}
	return parts.Pipeline, nil
}
