package bolt

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// FuzzDecodeRecords: any bytes decode as a record or fail with an error,
// never a panic, and a record that decodes encodes back to one that
// decodes the same.
func FuzzDecodeRecords(f *testing.F) {
	at := time.Unix(1700000000, 5)
	f.Add(appendBodyRef(encodeEvent(&store.Event{Source: "s", ReceivedAt: at, Header: http.Header{"Content-Type": {"a"}, "X": {"1", "2"}}, Trace: map[string]string{"a": "b"}}), bodyRef{1, 2, 3}))
	f.Add(encodeDelivery(&store.Delivery{Upstream: "u", State: store.StateDead, NextAt: at, Shaping: store.Shaping{SetHeaders: map[string]string{"a": "b"}, RemoveHeaders: []string{"c"}}}))
	f.Add(encodeAttempt(&store.Attempt{N: 2, At: at, Status: 500, Error: "e"}))
	f.Add([]byte(`{"source":"s"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var e store.Event
		if ref, ok, err := decodeEvent(data, &e); err == nil && len(data) > 0 && data[0] == recordFormat {
			again := encodeEvent(&e)
			if ok {
				again = appendBodyRef(again, ref)
			}
			var e2 store.Event
			ref2, ok2, err := decodeEvent(again, &e2)
			if err != nil || ok2 != ok || ref2 != ref || !sameEvent(e, e2) {
				t.Fatalf("re-encoded event differs: %v\n%+v\n%+v", err, e, e2)
			}
		}
		var d store.Delivery
		if err := decodeDelivery(data, &d); err == nil && len(data) > 0 && data[0] == recordFormat {
			var d2 store.Delivery
			if err := decodeDelivery(encodeDelivery(&d), &d2); err != nil || !reflect.DeepEqual(normalDelivery(d), normalDelivery(d2)) {
				t.Fatalf("re-encoded delivery differs: %v\n%+v\n%+v", err, d, d2)
			}
		}
		var a store.Attempt
		_ = decodeAttempt(data, &a)
	})
}

// sameEvent compares events as the encoding keeps them: times by instant,
// empty maps as absent.
func sameEvent(a, b store.Event) bool {
	if !a.ReceivedAt.Equal(b.ReceivedAt) {
		return false
	}
	a.ReceivedAt, b.ReceivedAt = time.Time{}, time.Time{}
	for _, e := range []*store.Event{&a, &b} {
		if len(e.Header) == 0 {
			e.Header = nil
		}
		if len(e.Trace) == 0 {
			e.Trace = nil
		}
	}
	return reflect.DeepEqual(a, b)
}

func normalDelivery(d store.Delivery) store.Delivery {
	for _, t := range []*time.Time{&d.NextAt, &d.UpdatedAt, &d.ReplayedAt} {
		*t = time.Unix(0, t.UnixNano())
		if t.UnixNano() == 0 {
			*t = time.Time{}
		}
	}
	if len(d.SetHeaders) == 0 {
		d.SetHeaders = nil
	}
	if len(d.RemoveHeaders) == 0 {
		d.RemoveHeaders = nil
	}
	return d
}
