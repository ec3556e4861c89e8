package verify

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
	"sync"
)

// hmacAlgorithm is HMAC over the content with each configured key, a pool
// of keyed MACs per key so that no request allocates one.
type hmacAlgorithm struct {
	newHash func() hash.Hash
	pools   []*sync.Pool
}

func init() {
	for _, h := range []struct {
		names   []string
		newHash func() hash.Hash
	}{
		{[]string{"hmac-sha256", "sha256", ""}, sha256.New},
		{[]string{"hmac-sha1", "sha1"}, sha1.New},
		{[]string{"hmac-sha512", "sha512"}, sha512.New},
		// Still used by some providers (Patreon); HMAC-MD5 has no known
		// forgery, unlike MD5 alone.
		{[]string{"hmac-md5"}, md5.New},
	} {
		newHash := h.newHash
		registerAlgorithm(algorithmDef{
			new:     func(string) algorithm { return &hmacAlgorithm{newHash: newHash} },
			sigSize: newHash().Size(), maxCandidates: maxCandidates, sharedKey: true,
		}, h.names...)
	}
}

func (a *hmacAlgorithm) addKey(secret, encoding string) error {
	key, err := DecodeSecret(encoding, secret)
	if err != nil {
		return err
	}
	a.pools = append(a.pools, &sync.Pool{New: func() any { return hmac.New(a.newHash, key) }})
	return nil
}

func (a *hmacAlgorithm) verify(s *signed) bool {
	var sum [sha512.Size]byte
	for _, pool := range a.pools {
		mac := pool.Get().(hash.Hash)
		mac.Reset()
		s.write(mac, nil)
		digest := mac.Sum(sum[:0])
		pool.Put(mac)
		for _, c := range s.signatures() {
			if hmac.Equal(digest, c) {
				return true
			}
		}
	}
	return false
}

func (a *hmacAlgorithm) sign(key, encoding string, s *signed) ([]byte, error) {
	k, err := DecodeSecret(encoding, key)
	if err != nil {
		return nil, err
	}
	mac := hmac.New(a.newHash, k)
	s.write(mac, nil)
	return mac.Sum(nil), nil
}
