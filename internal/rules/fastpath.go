package rules

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/expr-lang/expr/ast"
)

// bodyPath reports the path of an expression that only reads one value of
// the body, such as body.id or body["event-data"]?.id, so that value can be
// read without parsing the whole body.
func bodyPath(node ast.Node) ([]string, bool) {
	var path []string
	for {
		switch n := node.(type) {
		case *ast.ChainNode:
			node = n.Node
		case *ast.MemberNode:
			prop, ok := n.Property.(*ast.StringNode)
			if !ok || n.Method {
				return nil, false
			}
			path = append([]string{prop.Value}, path...)
			node = n.Node
		case *ast.IdentifierNode:
			return path, n.Value == "body" && len(path) > 0
		default:
			return nil, false
		}
	}
}

// BodyPath returns the body path the expression reads, when that is all it
// does.
func (p *Program) BodyPath() ([]string, bool) {
	return p.path, p.path != nil
}

// ExtractKey reads the value at path from a JSON body and renders it as a
// key, as Key would after a full parse: strings as they are, numbers exactly
// (see number), an absent value as "". ok is false when the body is
// not JSON.
//
// It validates the body exactly as json.Valid does, in one pass that
// allocates only the key, so the request path costs less than a full
// parse. As in a parse into map[string]any, names match exactly after
// unescaping, the last of repeated names wins, and invalid UTF-8 reads as
// U+FFFD.
func ExtractKey(body []byte, path []string) (key string, ok bool) {
	var (
		n    = len(body)
		i    = 0
		nest nesting
		// descend: the next value is the one path leads into; capture: the
		// next value is the one at the end of path.
		descend = len(path) > 0
		capture = len(path) == 0
		// The value found at the end of path, if any.
		found           bool
		kind            byte
		start, end      int
		simple, vSimple bool
		isInt, vInt     bool
	)

value:
	i = skipSpace(body, i)
	if i >= n {
		return "", false
	}
	if capture {
		found, kind, start = true, body[i], i
	}
	if c := body[i]; c == '{' || c == '[' {
		if !nest.open(c == '{', descend) {
			return "", false
		}
		descend, capture = false, false
		i = skipSpace(body, i+1)
		switch {
		case i < n && body[i] == nest.closer():
			i++
			goto closed
		case c == '{':
			goto member
		}
		goto value
	}
	i, vSimple, vInt = scanScalar(body, i)
	if i < 0 {
		return "", false
	}
	if capture {
		end, simple, isInt = i, vSimple, vInt
		if kind == '"' {
			end = i - 1
		}
	}
	descend, capture = false, false

next:
	if nest.depth == 0 {
		if skipSpace(body, i) != n {
			return "", false
		}
		return render(body, found, kind, start, end, simple, isInt), true
	}
	if i = skipSpace(body, i); i >= n {
		return "", false
	}
	switch body[i] {
	case ',':
		i++
		if nest.closer() == '}' {
			goto member
		}
		goto value
	case nest.closer():
		i++
	default:
		return "", false
	}

closed:
	nest.close()
	goto next

member:
	i, descend, capture = nest.member(body, i, path)
	if i < 0 {
		return "", false
	}
	if descend || capture {
		found = false // a later duplicate replaces what an earlier one held
	}
	goto value
}

// nesting tracks the containers open in a scan, and how many of them lie
// on the path: the root object, then the values of path[0], path[1], ...
type nesting struct {
	depth, onPath int
	// objects marks which open containers are objects, one bit a level.
	objects [maxDepth/64 + 1]uint64
}

// open enters an object or array; onPathNext says it is the value the path
// leads into. It reports false past maxDepth.
func (s *nesting) open(object, onPathNext bool) bool {
	s.depth++
	if s.depth > maxDepth {
		return false
	}
	w, bit := s.depth/64, uint64(1)<<(s.depth%64)
	if object {
		s.objects[w] |= bit
		if onPathNext {
			s.onPath = s.depth
		}
	} else {
		s.objects[w] &^= bit
	}
	return true
}

// closer is the byte that closes the innermost container.
func (s *nesting) closer() byte {
	if s.objects[s.depth/64]&(uint64(1)<<(s.depth%64)) != 0 {
		return '}'
	}
	return ']'
}

func (s *nesting) close() {
	if s.onPath == s.depth {
		s.onPath--
	}
	s.depth--
}

// member scans an object member's name and colon at body[i], and returns
// the index of its value (-1 when invalid) and whether that value is the
// one the path leads into (descend) or the one at its end (capture).
func (s *nesting) member(body []byte, i int, path []string) (next int, descend, capture bool) {
	next, keyStart, keyEnd, keySimple := scanName(body, i)
	if next < 0 {
		return -1, false, false
	}
	if s.onPath == s.depth && s.depth <= len(path) && nameIs(body[keyStart:keyEnd], keySimple, path[s.depth-1]) {
		return next, s.depth < len(path), s.depth == len(path)
	}
	return next, false, false
}

// scanScalar scans the string, literal or number at body[i] and returns
// the index after it (-1 when it is not valid JSON), whether a string
// needs no unescaping, and whether a number is an integer.
func scanScalar(body []byte, i int) (next int, simple, isInt bool) {
	switch body[i] {
	case '"':
		next, simple = scanString(body, i+1)
		return next, simple, false
	case 't':
		return literalEnd(body, i, "true"), false, false
	case 'f':
		return literalEnd(body, i, "false"), false, false
	case 'n':
		return literalEnd(body, i, "null"), false, false
	}
	next, isInt = scanNumber(body, i)
	return next, false, isInt
}

func literalEnd(body []byte, i int, lit string) int {
	if !hasLiteral(body, i, lit) {
		return -1
	}
	return i + len(lit)
}

// scanName scans an object member's name and its colon from body[i] and
// returns the index of its value (-1 when invalid) and where the name's
// text lies.
func scanName(body []byte, i int) (next, start, end int, simple bool) {
	i = skipSpace(body, i)
	if i >= len(body) || body[i] != '"' {
		return -1, 0, 0, false
	}
	start = i + 1
	i, simple = scanString(body, start)
	if i < 0 {
		return -1, 0, 0, false
	}
	end = i - 1
	i = skipSpace(body, i)
	if i >= len(body) || body[i] != ':' {
		return -1, 0, 0, false
	}
	return i + 1, start, end, simple
}

// maxDepth is encoding/json's nesting limit; deeper documents are invalid.
const maxDepth = 10000

// render turns the value found in body[start:end] into a key.
func render(body []byte, found bool, kind byte, start, end int, simple, isInt bool) string {
	if !found {
		return ""
	}
	switch kind {
	case '"':
		s := body[start+1 : end]
		if simple {
			return string(s)
		}
		return unquote(s)
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n', '{', '[':
		return ""
	}
	lit := body[start:end]
	if isInt && fitsInt(lit) {
		// number makes it an int, which prints as written but for -0.
		if string(lit) == "-0" {
			return "0"
		}
		return string(lit)
	}
	key, _ := keyString(number(json.Number(lit)))
	return key
}

// fitsInt reports whether the integer literal lit fits an int.
func fitsInt(lit []byte) bool {
	limit := uint64(1)<<(strconv.IntSize-1) - 1
	if lit[0] == '-' {
		lit = lit[1:]
		limit++
	}
	var v uint64
	for _, c := range lit {
		d := uint64(c - '0')
		if v > (limit-d)/10 {
			return false
		}
		v = v*10 + d
	}
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func hasLiteral(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// plainByte marks the string bytes that need no attention: not a quote,
// backslash, control character or part of a multi-byte sequence.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString checks the string whose contents start at b[i] and returns the
// index after its closing quote, or -1; simple reports that the contents
// are ASCII without escapes, so they read as they are.
func scanString(b []byte, i int) (int, bool) {
	simple := true
	for {
		for i < len(b) && plainByte[b[i]] {
			i++
		}
		if i >= len(b) {
			return -1, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, simple
		case c == '\\':
			simple = false
			if i+1 >= len(b) {
				return -1, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if hex4(b, i+2) < 0 {
					return -1, false
				}
				i += 6
			default:
				return -1, false
			}
		case c < 0x20:
			return -1, false
		default:
			// Invalid UTF-8 is valid JSON; it reads as U+FFFD.
			simple = false
			i++
		}
	}
}

// hex4 reads four hex digits at b[i:], or returns -1.
func hex4(b []byte, i int) rune {
	if len(b)-i < 4 {
		return -1
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// scanNumber checks the number starting at b[i] and returns the index after
// it, or -1; isInt reports that it has no fraction or exponent.
func scanNumber(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1, false
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i = skipDigits(b, i+1)
	default:
		return -1, false
	}
	isInt := true
	if i < len(b) && b[i] == '.' {
		isInt = false
		j := skipDigits(b, i+1)
		if j == i+1 {
			return -1, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		isInt = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return -1, false
		}
		i = j
	}
	return i, isInt
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// nextRune decodes one character of checked string contents at s[i] the
// way encoding/json does, returning it and the index after it.
func nextRune(s []byte, i int) (rune, int) {
	c := s[i]
	if c < utf8.RuneSelf && c != '\\' {
		return rune(c), i + 1
	}
	if c != '\\' {
		r, size := utf8.DecodeRune(s[i:])
		return r, i + size
	}
	switch s[i+1] {
	case 'b':
		return '\b', i + 2
	case 'f':
		return '\f', i + 2
	case 'n':
		return '\n', i + 2
	case 'r':
		return '\r', i + 2
	case 't':
		return '\t', i + 2
	case 'u':
		r := hex4(s, i+2)
		i += 6
		if !utf16.IsSurrogate(r) {
			return r, i
		}
		// Only a valid pair is one character; the second escape of an
		// invalid pair is read on its own.
		if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
			if r2 := hex4(s, i+2); r2 >= 0 {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					return d, i + 6
				}
			}
		}
		return utf8.RuneError, i
	}
	return rune(s[i+1]), i + 2 // '"', '\\' or '/'
}

// nameIs reports whether the raw object member name s reads as name.
func nameIs(s []byte, simple bool, name string) bool {
	if simple {
		return string(s) == name
	}
	var buf [utf8.UTFMax]byte
	j := 0
	for i := 0; i < len(s); {
		var r rune
		r, i = nextRune(s, i)
		k := utf8.EncodeRune(buf[:], r)
		if len(name)-j < k || string(buf[:k]) != name[j:j+k] {
			return false
		}
		j += k
	}
	return j == len(name)
}

// unquote reads checked string contents the way encoding/json does.
func unquote(s []byte) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		var r rune
		r, i = nextRune(s, i)
		b.WriteRune(r)
	}
	return b.String()
}
