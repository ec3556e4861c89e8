package jetstream

import (
	"context"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// TestRejectionLogsPerInstance: two instances on one stream keep their own
// logs of a source; a read merges them in time order, and an instance
// carries on with its own only.
func TestRejectionLogsPerInstance(t *testing.T) {
	ns := runServer(t)
	a, b := open(t, ns), open(t, ns)
	ctx := context.Background()
	at := time.Unix(1700000000, 0).UTC()
	rec := func(sec int, reason string) store.Rejection {
		return store.Rejection{At: at.Add(time.Duration(sec) * time.Second), Source: "stripe", Reason: reason, Status: 401}
	}
	if err := a.KeepRejections(ctx, map[string]store.RejectionLog{"stripe": {Records: []store.Rejection{rec(1, "a1"), rec(3, "a3")}, Dropped: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := b.KeepRejections(ctx, map[string]store.RejectionLog{"stripe": {Records: []store.Rejection{rec(2, "b2")}}, "github-app": {Records: []store.Rejection{rec(0, "g")}}}); err != nil {
		t.Fatal(err)
	}
	// A second write replaces the instance's log, it does not add to it.
	if err := a.KeepRejections(ctx, map[string]store.RejectionLog{"stripe": {Records: []store.Rejection{rec(1, "a1"), rec(3, "a3"), rec(4, "a4")}, Dropped: 2}}); err != nil {
		t.Fatal(err)
	}
	all, err := a.Rejections(false)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, r := range all["stripe"].Records {
		reasons = append(reasons, r.Reason)
	}
	if len(all) != 2 || len(all["github-app"].Records) != 1 || all["stripe"].Dropped != 2 || len(reasons) != 4 ||
		reasons[0] != "a1" || reasons[1] != "b2" || reasons[2] != "a3" || reasons[3] != "a4" {
		t.Fatalf("merged: %v %+v", reasons, all)
	}
	mine, err := b.Rejections(true)
	if err != nil || len(mine["stripe"].Records) != 1 || mine["stripe"].Records[0].Reason != "b2" || len(mine) != 2 {
		t.Fatalf("b's own: %+v %v", mine, err)
	}
}
