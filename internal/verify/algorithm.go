package verify

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
)

// An algorithm makes and checks the signature bytes of a declared scheme's
// signed content. Each is a file of its own that registers its names; the
// Declarative scheme parses headers, timestamps and content, and never
// names one.
type algorithm interface {
	// addKey takes one configured secret or public key, decoded as the
	// spec's secret_encoding says.
	addKey(secret, encoding string) error
	// verify reports whether one of the request's signatures signs its
	// content under one of the keys.
	verify(s *signed) bool
	// sign signs the content with key, a shared secret or a private key.
	sign(key, encoding string, s *signed) ([]byte, error)
}

// signed is one request's signed content and the signatures it carries,
// as an algorithm checks them; pooled by its scheme, so that verifying
// allocates nothing.
type signed struct {
	d         *Declarative
	r         *Request
	ts, id    string
	sigs      [maxCandidates][]byte
	n         int
	timestamp string // the timestamp pair of the signature header
	// buf holds the content for algorithms that sign it whole.
	buf bytes.Buffer
}

// write writes the signed content; secret fills its {secret} (only a
// hash's content holds one).
func (s *signed) write(w io.Writer, secret []byte) { s.d.writeContent(w, s.r, s.ts, s.id, secret) }

// signatures are the candidate signatures, decoded.
func (s *signed) signatures() [][]byte { return s.sigs[:s.n] }

// algorithmDef is a registered algorithm and what the scheme around it
// must know.
type algorithmDef struct {
	// new makes an algorithm without keys for a spec's body format.
	new func(format string) algorithm
	// sigSize is a signature's length in bytes; 0 when it varies.
	sigSize int
	// maxCandidates bounds the signatures tried from one request: each
	// public-key verification hashes the whole body again.
	maxCandidates int
	// sharedKey marks algorithms whose secrets are keys a MAC or hash uses,
	// held to MinKeyBytes.
	sharedKey bool
	// signsSecret marks algorithms whose content may hold {secret}.
	signsSecret bool
	// checkBody, when set, refuses a body the algorithm cannot cover
	// safely, after its signature verified (length extension).
	checkBody func(format string, body []byte) error
}

var algorithms = map[string]algorithmDef{}

// registerAlgorithm registers def under each of its names.
func registerAlgorithm(def algorithmDef, names ...string) {
	for _, n := range names {
		if _, dup := algorithms[n]; dup {
			panic("algorithm registered twice: " + n)
		}
		algorithms[n] = def
	}
}

// lookupAlgorithm finds a registered algorithm by name.
func lookupAlgorithm(name string) (algorithmDef, error) {
	def, ok := algorithms[strings.ToLower(name)]
	if !ok {
		return algorithmDef{}, fmt.Errorf("unknown algorithm %q (use %s)", name, strings.Join(Algorithms(), ", "))
	}
	return def, nil
}

// Algorithms are the names a declared scheme may give, the credential checks
// (token, basic) among them.
func Algorithms() []string {
	names := []string{"token", "basic"}
	for n := range algorithms {
		if n != "" && !strings.HasPrefix(n, "sha") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Asymmetric reports whether a spec algorithm verifies with a public key,
// so that what a source configures cannot sign.
func Asymmetric(name string) bool {
	def, err := lookupAlgorithm(name)
	return err == nil && def.maxCandidates == maxAsymmetricCandidates
}
