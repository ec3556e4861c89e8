package rules

import (
	"encoding/json"
	"testing"

	"github.com/hookgate/hookgate/internal/verify"
)

// Ids above 2^53 are distinct keys, on the full parse and on the fast path:
// a float64 would make 9007199254740993 the same key as 9007199254740992.
func TestNumericKeysAreExact(t *testing.T) {
	key, err := CompileKey(`body.id`)
	if err != nil {
		t.Fatal(err)
	}
	path, _ := key.BodyPath()
	cases := map[string]string{
		`{"id":9007199254740992}`:       "9007199254740992",
		`{"id":9007199254740993}`:       "9007199254740993",
		`{"id":-9007199254740993}`:      "-9007199254740993",
		`{"id":1180591620717411303424}`: "1180591620717411303424", // 2^70, past int64
		`{"id":1180591620717411303425}`: "1180591620717411303425",
		`{"id":0.30000000000000000001}`: "0.30000000000000000001", // no float64 holds it
		`{"id":0.3}`:                    "0.3",
		`{"id":1.5e3}`:                  "1500",
		`{"id":1.50}`:                   "1.5", // the same number as 1.5, the same key
		`{"id":12}`:                     "12",
	}
	for body, want := range cases {
		parsed, err := ParseBody(verify.FormatJSON, []byte(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		got, err := key.Key(&Env{Body: parsed})
		if err != nil || got != want {
			t.Errorf("%s: key %q (%v), want %q", body, got, err, want)
		}
		if fast, ok := ExtractKey([]byte(body), path); !ok || fast != want {
			t.Errorf("%s: fast key %q (%v), want %q", body, fast, ok, want)
		}
	}
}

// Rules still compare numbers, exactly where the value is exact.
func TestNumericRules(t *testing.T) {
	body := jsonBody(t, `{"amount":150,"price":99.95,"big":9007199254740993,"exp":2e2,"huge":1180591620717411303424}`)
	env := &Env{Body: body}
	cases := map[string]bool{
		`body.amount > 100`:                      true,
		`body.amount > 150`:                      false,
		`body.amount == 150.0`:                   true,
		`body.amount >= 100.5`:                   true,
		`body.price < 100`:                       true,
		`body.price > 99.9`:                      true,
		`body.big == 9007199254740993`:           true,
		`body.big == 9007199254740992`:           false,
		`body.big > 9007199254740992`:            true,
		`body.exp == 200`:                        true,
		`body.amount % 7 == 3`:                   true,
		`body.amount / 2 == 75`:                  true,
		`string(body.big) == "9007199254740993"`: true,
	}
	for src, want := range cases {
		got, err := mustCondition(t, src).Match(env)
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", src, got, err, want)
		}
	}
	// A number no int or float64 holds is kept as written: comparing it is
	// an error (a non-match), never a comparison with a rounded value.
	if ok, err := mustCondition(t, `body.huge > 1`).Match(env); ok || err == nil {
		t.Errorf("an inexact number compared: %v %v", ok, err)
	}
	// Schemas and transforms take the exact values.
	schema, err := CompileInlineSchema("n", map[string]any{"properties": map[string]any{
		"amount": map[string]any{"type": "integer", "minimum": 100},
		"price":  map[string]any{"type": "number", "maximum": 100},
		"big":    map[string]any{"type": "integer", "minimum": 9007199254740993},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Check(body); err != nil {
		t.Errorf("schema on exact numbers: %v", err)
	}
	out, err := json.Marshal(body)
	if err != nil || string(out) != `{"amount":150,"big":9007199254740993,"exp":200,"huge":1180591620717411303424,"price":99.95}` {
		t.Errorf("re-encoded: %s %v", out, err)
	}
}

// A literal with a vast exponent costs no big arithmetic.
func TestDecimalHugeExponent(t *testing.T) {
	for _, lit := range []string{"1e-999999999", "1e999999999", "-0.0e-5"} {
		_ = number(json.Number(lit))
	}
	if v := number(json.Number("-0.0")); v != 0.0 && v != 0 {
		t.Errorf("-0.0 = %v", v)
	}
}
