package verify

import (
	"errors"
	"fmt"
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

// Unresolved stands for the scheme of a source whose secrets a check left
// unresolved (config.Options.NoSecrets): it refuses every request, and no
// configuration that serves has one.
var Unresolved Scheme = unresolved{}

type unresolved struct{}

func (unresolved) Verify(*Request) (Result, error) {
	return Result{}, fmt.Errorf("%w: the source's secrets were not resolved", ErrInvalidSignature)
}

// CheckSpec checks a declarative scheme without its secrets.
func CheckSpec(spec Spec) error {
	_, err := compileSpec(spec)
	return err
}
