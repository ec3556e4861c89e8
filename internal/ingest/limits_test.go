package ingest_test

import (
	"strings"
	"testing"
	"time"
)

func TestBackpressure(t *testing.T) {
	const routes = "max_pending: 2\nupstreams:\n  u:\n    url: http://x\nsources:\n  gh:\n    path: /gh\n    provider: github\n    secrets: [s-0123456789abcdef]\n    default: [u]\n"
	h, _ := routingHarness(t, routes)
	codes := []int{}
	for i := range 3 {
		body := []byte(`{"n":` + string(rune('0'+i)) + `}`)
		hdr := sign(t, "github", "s-0123456789abcdef", body)
		hdr.Set("X-GitHub-Delivery", string(rune('a'+i)))
		codes = append(codes, h.send("/gh", hdr, body).Code)
	}
	if codes[0] != 200 || codes[1] != 200 || codes[2] != 503 {
		t.Fatalf("statuses %v, want 200 200 503", codes)
	}
	rec := h.send("/gh", nil, nil)
	if rec.Code != 401 {
		t.Fatalf("unsigned request under backpressure: %d, want 401 first", rec.Code)
	}
}

func TestOrderingKeyAtIngest(t *testing.T) {
	const routes = "upstreams:\n  u:\n    url: http://x\n    ordering:\n      key: body.data.object.customer\nsources:\n  gh:\n    path: /gh\n    provider: github\n    secrets: [s-0123456789abcdef]\n    default: [u]\n"
	h, _ := routingHarness(t, routes)
	st := h.store
	for i, cus := range []string{"cus_1", "cus_1", "cus_2"} {
		body := []byte(`{"n":` + string(rune('0'+i)) + `,"data":{"object":{"customer":"` + cus + `"}}}`)
		hdr := sign(t, "github", "s-0123456789abcdef", body)
		if rec := h.send("/gh", hdr, body); rec.Code != 200 {
			t.Fatalf("status %d", rec.Code)
		}
	}
	tasks, _ := st.Due("u", time.Now().Add(time.Hour), 10)
	var keys []string
	for _, task := range tasks {
		keys = append(keys, task.Delivery.OrderKey)
	}
	if strings.Join(keys, ",") != "cus_1,cus_2" {
		t.Fatalf("due with order keys %v, want the heads cus_1 and cus_2 only", keys)
	}
}
