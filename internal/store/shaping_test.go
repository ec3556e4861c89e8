package store

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A delivery's shaping keeps its JSON names, and a target stored before
// shaping had JSON names (JetStream event records) still reads whole.
func TestShapingJSON(t *testing.T) {
	d := Delivery{Upstream: "u", Shaping: Shaping{Path: "/p", SetHeaders: map[string]string{"X-A": "1"}, RemoveHeaders: []string{"X-B"}}, Transformed: true}
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var flat map[string]any
	if err := json.Unmarshal(raw, &flat); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"path", "set_headers", "remove_headers", "transformed"} {
		if _, ok := flat[key]; !ok {
			t.Errorf("delivery JSON %s lacks %q", raw, key)
		}
	}

	want := Target{Upstream: "u", Route: "r", OrderKey: "k", Shaping: Shaping{Path: "/p", SetHeaders: map[string]string{"X-A": "1"}, RemoveHeaders: []string{"X-B"}}, Body: []byte("{}")}
	legacy := `{"Upstream":"u","Route":"r","OrderKey":"k","Path":"/p","SetHeaders":{"X-A":"1"},"RemoveHeaders":["X-B"],"Body":"e30="}`
	for name, data := range map[string]string{"legacy": legacy, "current": mustJSON(t, want)} {
		var got Target
		if err := json.Unmarshal([]byte(data), &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s target %s read as %+v, want %+v", name, data, got, want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
