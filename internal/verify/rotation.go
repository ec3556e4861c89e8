package verify

import (
	"errors"
)

// PerSecret compiles a scheme for each secret on its own and verifies with
// them in the order the secrets are configured, so a Result says which
// secret verified (Result.Secret): during a rotation the operator sees when
// the old secret is no longer used. With one secret or none, it is compile
// itself. A failed compile of secret i is a SecretError naming it.
//
// A scheme that fetches keys (SNS, PayPal, JWKS) keeps a cache and a fetch
// budget per secret then, so a rotation's two secrets may fetch twice.
func PerSecret(secrets []string, compile func([]string) (Scheme, error)) (Scheme, error) {
	if len(secrets) <= 1 {
		return compile(secrets)
	}
	r := make(rotation, len(secrets))
	for i, s := range secrets {
		scheme, err := compile([]string{s})
		if err != nil {
			var se *SecretError
			if errors.As(err, &se) {
				return nil, &SecretError{Index: i + 1, Err: se.Err}
			}
			return nil, &SecretError{Index: i + 1, Err: err}
		}
		r[i] = scheme
	}
	return r, nil
}

// rotation is one scheme per configured secret, tried in order.
type rotation []Scheme

// Verify returns the first secret's success. When none verifies, the
// answer is the most telling one: a key that could not be fetched (the
// provider should retry) over anything else, and a specific reason (a
// stale timestamp, a malformed header) over a signature that did not
// match.
func (r rotation) Verify(req *Request) (Result, error) {
	var best error
	for i, s := range r {
		res, err := s.Verify(req)
		if err == nil {
			res.Secret = i
			return res, nil
		}
		switch {
		case best == nil, errors.Is(err, ErrKeyUnavailable):
			best = err
		case errors.Is(best, ErrInvalidSignature) && !errors.Is(err, ErrInvalidSignature) && !errors.Is(best, ErrKeyUnavailable):
			best = err
		}
	}
	return Result{}, best
}
