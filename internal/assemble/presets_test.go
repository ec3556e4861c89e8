package assemble_test

import (
	"testing"

	"github.com/hookgate/hookgate/internal/rules"
	"github.com/hookgate/hookgate/internal/verify"
)

// TestPresetExpressionsCompile compiles every preset's dedup key and live
// marker, as a config load would.
func TestPresetExpressionsCompile(t *testing.T) {
	presets := verify.Presets()
	if len(presets) < 40 {
		t.Fatalf("%d presets, want at least 40", len(presets))
	}
	for _, p := range presets {
		if p.DedupKey != "" {
			if _, err := rules.CompileKey(p.DedupKey); err != nil {
				t.Errorf("%s: dedup key %q: %v", p.Name, p.DedupKey, err)
			}
		}
		if p.Live != "" {
			if _, err := rules.CompileCondition(p.Live); err != nil {
				t.Errorf("%s: live marker %q: %v", p.Name, p.Live, err)
			}
		}
		if p.Description == "" || (p.Build == nil && p.Spec.Header == "") || (p.Build != nil && p.Bespoke == "") {
			t.Errorf("%s: incomplete definition", p.Name)
		}
	}
}
