package store

import (
	"testing"
	"time"
)

func TestIDs(t *testing.T) {
	var g IDSource
	now := time.UnixMilli(1700000000123)
	a, b := g.Next(now), g.Next(now)
	if a.String() >= b.String() {
		t.Fatalf("ids in one millisecond not increasing: %s %s", a, b)
	}
	if !a.Time().Equal(now) {
		t.Fatalf("id time %v, want %v", a.Time(), now)
	}
	earlier := g.Next(now.Add(-time.Second))
	if earlier.String() <= b.String() {
		t.Fatalf("clock going back produced a smaller id: %s after %s", earlier, b)
	}
	for _, id := range []ID{a, b, {}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}} {
		s := id.String()
		back, err := ParseID(s)
		if err != nil || back != id || len(s) != 26 {
			t.Fatalf("round trip %x -> %s -> %x %v", id, s, back, err)
		}
	}
	for _, bad := range []string{"", "short", "8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "01ARZ3NDEKTSV4RRFFQ69G5FA!"} {
		if _, err := ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) accepted", bad)
		}
	}
}
