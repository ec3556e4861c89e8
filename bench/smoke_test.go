package main

import (
	"strings"
	"testing"
)

// TestSmoke runs every scenario of the harness at a tiny size, so that it
// keeps working; it asserts figures exist, never how fast they are.
func TestSmoke(t *testing.T) {
	rows, err := Run(smoke, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"baseline respond 200, wrk c64", "ingest, wrk c64", "ACK @ 200/s, ingest", "ingest + delivery, wrk c8", "ACK @ 200/s, delivering", "ingest under strace", "baseline respond 200, vegeta", "ingest", "ingest, 50% duplicates", "reverse_proxy, same requests", "delivery drain", "ingest with 200 stored", "ingest with 1000 stored", "pending", "JetStream 1 node", "JetStream 3 node", "R3, sync_interval always"}
	for _, scenario := range want {
		found := false
		for _, r := range rows {
			if strings.Contains(r.Scenario, scenario) && r.Value > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("no figure for %q", scenario)
		}
	}
	for _, r := range rows {
		if r.Baseline != "" && !(r.Ratio > 0) {
			t.Errorf("%s %s: ratio %v against %s", r.Scenario, r.Metric, r.Ratio, r.Baseline)
		}
	}
}
