package ingest

import (
	"crypto/sha256"
	"encoding/hex"
)

// digestKey is the dedup key of a body whose preset key came out empty: a
// provider's retry of an event sends the same signed bytes, so they are
// still one event, and the key cannot be emptied by how the request is
// labelled.
func digestKey(body []byte) string {
	sum := sha256.Sum256(body)
	var key [len("sha256:") + 2*sha256.Size]byte
	copy(key[:], "sha256:")
	hex.Encode(key[len("sha256:"):], sum[:])
	return string(key[:])
}
