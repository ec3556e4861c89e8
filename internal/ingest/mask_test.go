package ingest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/store/bolt"
	"github.com/hookgate/hookgate/internal/verify"
)

func TestMaskedBodies(t *testing.T) {
	m := ingest.NewMasker(nil)
	got := m.Mask(verify.FormatJSON, []byte(`{"id":"evt_1","customer":{"email":"jane@example.com","name":"Jane Roe","note":"call +1 (415) 555-0100 or mail bob@corp.io"},"items":[{"phone":"123"}],"amount":2000}`), nil)
	for _, secret := range []string{"jane@example.com", "Jane Roe", "555-0100", "bob@corp.io", `"123"`} {
		if strings.Contains(got, secret) {
			t.Errorf("%q left in %s", secret, got)
		}
	}
	for _, kept := range []string{`"id":"evt_1"`, `"amount":2000`} {
		if !strings.Contains(got, kept) {
			t.Errorf("%s lost from %s", kept, got)
		}
	}
	custom := ingest.NewMasker([]string{"Customer"})
	if got := custom.Mask(verify.FormatJSON, []byte(`{"customer":{"x":1},"email":"a@b.co"}`), nil); got != `{"customer":"[masked]","email":"[masked]"}` {
		t.Errorf("custom fields: %s", got)
	}
	if got := m.Mask(verify.FormatForm, []byte("From=%2B14155550100&Body=hi"), nil); strings.Contains(got, "4155550100") {
		t.Errorf("form: %s", got)
	}
	if got := m.Mask(verify.FormatEither, []byte(strings.Repeat("x", 10000)), nil); len(got) > ingest.MaxLoggedBody+4 {
		t.Errorf("body not truncated: %d", len(got))
	}
}

// TestLogsNeverCarrySecrets logs a webhook at debug with bodies on: the
// signature and secret never appear, personal data is masked.
func TestLogsNeverCarrySecrets(t *testing.T) {
	const yaml = "logging:\n  bodies: true\nupstreams:\n  u:\n    url: http://127.0.0.1:1\nsources:\n  gh:\n    path: /gh\n    provider: github\n    secrets: [super-secret-value]\n    default: [u]\n"
	cfg, err := config.Parse("routes.yaml", []byte(yaml), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := bolt.Open(t.TempDir()+"/h.db", bolt.Options{})
	defer st.Close()
	core, logs := observer.New(zap.DebugLevel)
	p.Attach(st, zap.New(core), func() time.Time { return testNow })
	h := &harness{p: p, store: st}
	body := []byte(`{"sender":{"email":"jane@example.com"},"action":"opened"}`)
	hdr := sign(t, "github", "super-secret-value", body)
	if rec := h.send("/gh", hdr, body); rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	h.send("/gh", sign(t, "github", "wrong", body), body) // a rejection is logged too
	var all strings.Builder
	for _, e := range logs.All() {
		all.WriteString(e.Message)
		for k, v := range e.ContextMap() {
			all.WriteString(" " + k + "=" + strings.TrimSpace(strings.ReplaceAll(toString(v), "\n", " ")))
		}
		all.WriteString("\n")
	}
	text := all.String()
	signature := hdr.Get("X-Hub-Signature-256")
	for _, secret := range []string{"super-secret-value", signature, signature[7:], "jane@example.com"} {
		if strings.Contains(text, secret) {
			t.Errorf("log contains %q:\n%s", secret, text)
		}
	}
	if !strings.Contains(text, "event received") || !strings.Contains(text, `"action":"opened"`) || !strings.Contains(text, "invalid_signature") {
		t.Errorf("expected lines missing:\n%s", text)
	}
}

func toString(v any) string { return fmt.Sprint(v) }

// A source's credential fields are masked whatever mask_fields names.
func TestMaskSecretFields(t *testing.T) {
	m := ingest.NewMasker([]string{"note"})
	got := m.Mask(verify.FormatJSON, []byte(`{"value":[{"clientState":"s3cret","note":"n","ok":1}]}`), []string{"clientState"})
	if strings.Contains(got, "s3cret") || strings.Contains(got, `"n"`) || !strings.Contains(got, `"ok":1`) {
		t.Fatalf("masked %s", got)
	}
	if got := m.Mask(verify.FormatJSON, []byte(`not json s3cret`), []string{"clientState"}); strings.Contains(got, "s3cret") {
		t.Fatalf("an unparsed body of a source with secret fields: %s", got)
	}
}
