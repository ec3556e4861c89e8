package verify

import (
	"os"
	"strings"
	"testing"
)

// TestProvidersDocIsGenerated keeps docs/providers.md equal to what the
// preset definitions generate; regenerate with
// `hookgate providers --markdown > docs/providers.md`.
func TestProvidersDocIsGenerated(t *testing.T) {
	doc, err := os.ReadFile("../../docs/providers.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(doc) != MarkdownTable() {
		t.Fatal("docs/providers.md is out of date: run `go run ./cmd/hookgate providers --markdown > docs/providers.md`")
	}
	for _, p := range Presets() {
		if !strings.Contains(string(doc), "| `"+p.Name+"` |") {
			t.Errorf("preset %s missing from the table", p.Name)
		}
	}
}
