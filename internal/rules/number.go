package rules

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Numbers in bodies keep their exact value. encoding/json's default float64
// holds integers exactly only up to 2^53, so ids 9007199254740992 and
// 9007199254740993 would be one dedup key and the second event would be
// answered as a duplicate of the first.

// number is the value expressions see for a JSON number: an int when the
// literal is an integer that fits, a float64 when one holds the literal's
// decimal value exactly, and the literal itself (a json.Number, which
// arithmetic and comparisons refuse) otherwise. Two different numbers never
// become one value.
func number(n json.Number) any {
	if i, err := strconv.ParseInt(string(n), 10, strconv.IntSize); err == nil {
		return int(i)
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return n
	}
	if a, ok := decimal(string(n)); ok {
		if b, _ := decimal(strconv.FormatFloat(f, 'e', -1, 64)); a == b {
			return f
		}
	}
	return n
}

// exactNumbers replaces the json.Numbers of a decoded value by number's.
func exactNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			t[k] = exactNumbers(val)
		}
	case []any:
		for i, val := range t {
			t[i] = exactNumbers(val)
		}
	case json.Number:
		return number(t)
	}
	return v
}

// canonical is a decimal number as sign, significant digits, and the power
// of ten of the last digit: -12.50 is {true, "125", -1}; zero is {}.
type canonical struct {
	neg    bool
	digits string
	exp    int
}

// maxExponent bounds the exponents compared, far beyond float64's range.
const maxExponent = 1 << 20

// decimal reads a JSON number literal (or strconv's 'e' format) without
// big arithmetic, so a literal like 1e-999999999 costs nothing.
func decimal(lit string) (canonical, bool) {
	var c canonical
	s := lit
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		c.neg, s = true, rest
	}
	mant, expText, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		e, err := strconv.Atoi(expText)
		if err != nil || e > maxExponent || e < -maxExponent {
			return c, false
		}
		c.exp = e
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	c.exp -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	c.exp += len(digits) - len(trimmed)
	if trimmed == "" {
		return canonical{}, true
	}
	c.digits = trimmed
	return c, true
}
