package ipranges_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hookgate/hookgate/internal/ipranges"
	"github.com/hookgate/hookgate/internal/verify"
)

// TestPresetsNameKnownRanges: the egress ranges a preset's delivery facts
// name are ranges allow_ips knows, and every range is named by the preset
// it is for, so `hookgate providers --json` and allow_ips agree.
func TestPresetsNameKnownRanges(t *testing.T) {
	known := map[string]bool{}
	for _, r := range ipranges.Catalog() {
		known[r.Name] = true
	}
	named := map[string]bool{}
	for _, p := range verify.Presets() {
		for _, name := range p.Delivery.IPRanges {
			if !known[name] {
				t.Errorf("preset %s names range %q, which allow_ips does not know", p.Name, name)
			}
			named[name] = true
		}
	}
	for name := range known {
		owner := strings.TrimSuffix(name, "-sandbox")
		p, ok := verify.Lookup(owner)
		if !ok || !slices.Contains(p.Delivery.IPRanges, name) {
			t.Errorf("range %s is not in the delivery facts of preset %s", name, owner)
		}
	}
}
