package closest

import (
	"slices"
	"testing"
)

func TestNames(t *testing.T) {
	known := []string{"github", "gitlab", "stripe", "square", "standard-webhooks"}
	for _, c := range []struct {
		unknown string
		want    []string
	}{
		{"githb", []string{"github", "gitlab"}},  // one edit, and two
		{"GitHub", []string{"github", "gitlab"}}, // case folded; gitlab is two edits away
		{"standard", []string{"standard-webhooks"}},
		{"stripe-events", []string{"stripe"}}, // contains a known name
		{"sqare", []string{"square"}},
		{"zzzz", nil},
	} {
		if got := Names(c.unknown, known); !slices.Equal(got, c.want) {
			t.Errorf("Names(%q) = %v, want %v", c.unknown, got, c.want)
		}
	}
}
