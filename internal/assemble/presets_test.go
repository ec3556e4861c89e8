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
		if p.Dedup.Key != "" {
			if _, err := rules.CompileKey(p.Dedup.Key); err != nil {
				t.Errorf("%s: dedup key %q: %v", p.Name, p.Dedup.Key, err)
			}
		}
		if p.Live.Expr != "" {
			if _, err := rules.CompileCondition(p.Live.Expr); err != nil {
				t.Errorf("%s: live marker %q: %v", p.Name, p.Live.Expr, err)
			}
		}
		if p.Description == "" || (p.Bespoke.Build == nil && p.Spec.Header == "") || (p.Bespoke.Build != nil && p.Bespoke.Describe == "") {
			t.Errorf("%s: incomplete definition", p.Name)
		}
	}
}
