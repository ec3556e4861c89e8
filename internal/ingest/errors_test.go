package ingest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hookgate/hookgate/internal/assemble"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/verify"
)

// Callers branch on these errors by type, never by their text.
func TestTypedErrors(t *testing.T) {
	h, db := routingHarness(t, routingYAML)
	code, id := h.post(t, "/nowhere", `{"kind":"order"}`)
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	eid, _ := store.ParseID(id)
	h.store.Close()
	// Another configuration on the same store, without the event's source.
	other := strings.Replace(routingYAML, "path: /nowhere", "path: /elsewhere", 1)
	other = strings.Replace(other, "  nowhere:", "  renamed:", 1)
	h2 := routingHarnessAt(t, other, db)
	if _, err := h2.p.Reroute(context.Background(), eid); !errors.Is(err, ingest.ErrUnknownSource) {
		t.Fatalf("reroute by a configuration without the source: %v", err)
	}

	spec := verify.Spec{Algorithm: "ed25519", Header: "X-Sig"}
	_, err := verify.New(spec, []string{"0123456789abcdef0123456789abcdef", "not-a-key"})
	var secretErr *verify.SecretError
	if !errors.As(err, &secretErr) || secretErr.Index != 2 {
		t.Fatalf("a key the scheme cannot use: %v", err)
	}
	cfg, err := config.Parse("routes.yaml", []byte(oneSource("    verify: {algorithm: ed25519, header: X-Sig}\n    secrets: [\"zz\"]\n")), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := assemble.Config(cfg, ingest.Hooks{}); err == nil || !strings.Contains(err.Error(), "routes.yaml:8:5: source s: secret 1:") {
		t.Fatalf("the error does not point at the secrets: %v", err)
	}
}
