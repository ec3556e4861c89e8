package verify

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
)

// hashAlgorithm is a plain SHA-256 of content that holds {secret}
// (HubSpot v1 and v2): not a MAC, so it is open to length extension, which
// checkHashedBody closes.
type hashAlgorithm struct{ secrets [][]byte }

func init() {
	registerAlgorithm(algorithmDef{
		new:     func(string) algorithm { return &hashAlgorithm{} },
		sigSize: sha256.Size, maxCandidates: maxCandidates, sharedKey: true, signsSecret: true,
		checkBody: checkHashedBody,
	}, "hash-sha256")
}

func (a *hashAlgorithm) addKey(secret, _ string) error {
	a.secrets = append(a.secrets, []byte(secret))
	return nil
}

func (a *hashAlgorithm) verify(s *signed) bool {
	for _, secret := range a.secrets {
		s.buf.Reset()
		s.write(&s.buf, secret)
		sum := sha256.Sum256(s.buf.Bytes())
		for _, c := range s.signatures() {
			if hmac.Equal(sum[:], c) {
				return true
			}
		}
	}
	return false
}

func (a *hashAlgorithm) sign(key, _ string, s *signed) ([]byte, error) {
	var buf bytes.Buffer
	s.write(&buf, []byte(key))
	sum := sha256.Sum256(buf.Bytes())
	return sum[:], nil
}

// checkHashedBody guards a plain hash of {secret}…{body} against SHA-256
// length extension: from one captured digest anyone can compute the digest
// of the same content plus padding plus data of their choosing. The padding
// holds 0x80 and zero bytes, so a body that is wholly one value of the
// provider's format cannot carry it. An empty body has nothing appended.
func checkHashedBody(format string, body []byte) error {
	if len(body) == 0 || WellFormed(format, body) {
		return nil
	}
	return fmt.Errorf("%w: hash-sha256 signs only a body that is wholly %s", ErrInvalidSignature, format)
}
