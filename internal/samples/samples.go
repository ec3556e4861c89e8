// Package samples is the sample kit of the provider catalog: for each
// preset, a realistic event as its provider sends it (two, about one
// object, for the catalog's dedup property), the headers the provider
// always sends, and how a sample is signed where the preset's own scheme
// cannot sign it. `hookgate send` and the tests use it; verification never
// does.
package samples

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hookgate/hookgate/internal/verify"
)

// Kit is one preset's samples.
type Kit struct {
	// New builds a sample event.
	New func(Input) (Sample, error)
	// Signer signs samples where the preset's scheme cannot (a signature
	// in the body, a second header the provider sends); nil signs with it.
	Signer verify.Signer
	// Learn is the handshake that teaches a learned-secret scheme its
	// secret (Asana's X-Hook-Secret, Notion's verification_token); nil for
	// the others.
	Learn func(secret string) (http.Header, []byte)
	// Sends names the headers the provider sends with every event, the
	// signature's among them. A backend that validates with the provider's
	// SDK may refuse a request that lacks one, so a sample carries each of
	// them (New's headers plus the signer's); a test holds every kit to it.
	Sends []string
}

var kits = map[string]Kit{}

// register adds a preset's kit; a name registered twice, or one the
// catalog does not have, is a bug.
func register(name string, k Kit) {
	if _, dup := kits[name]; dup {
		panic("sample kit registered twice: " + name)
	}
	if _, ok := verify.Lookup(name); !ok {
		panic("sample kit for a preset the catalog does not have: " + name)
	}
	kits[name] = k
}

// LearnRequest is the handshake that teaches p's scheme secret, if it
// learns one.
func LearnRequest(p verify.Preset, secret string) (http.Header, []byte, bool) {
	k := kits[p.Name]
	if k.Learn == nil {
		return nil, nil, false
	}
	h, body := k.Learn(secret)
	return h, body, true
}

// Sends names the headers the provider always sends (Kit.Sends).
func Sends(p verify.Preset) []string { return kits[p.Name].Sends }

// Sample is a realistic test event for a preset, as `hookgate send` sends it.
type Sample struct {
	Body   []byte
	Header http.Header
	// ID is the message id for schemes that sign one.
	ID string
}

// Input is what a kit builds an event from.
type Input struct {
	// ID is fresh random hex, so that each sample is a new event for
	// deduplication.
	ID string
	// Now is when the sample is sent and signed.
	Now time.Time
	// Key is the signing key, for providers that sign inside the body
	// (Mailgun, Adyen, Microsoft Graph).
	Key string
	// Object names what the event is about (an order, a message, an
	// issue): two samples with one Object are two events about one thing.
	Object string
	// Step picks the event: 0 is the preset's usual sample, 1 a later,
	// distinct event about the same Object (a status change, an update),
	// as the catalog's dedup property sends them.
	Step int
}

// ObjectNumber is Object as a positive number, for providers whose ids
// are numeric; EventNumber is ID as one.
func (in Input) ObjectNumber() int64 { return hexNumber(in.Object) }

// EventNumber is ID as a positive number.
func (in Input) EventNumber() int64 { return hexNumber(in.ID) }

func hexNumber(s string) int64 {
	n, _ := strconv.ParseInt(s[:min(len(s), 12)], 16, 64)
	return n + 1
}

// pick is the first event's value at Step 0, the later one's after.
func (in Input) pick(first, later string) string {
	if in.Step > 0 {
		return later
	}
	return first
}

// RFC3339 is Now as the UTC date most providers put in their events.
func (in Input) RFC3339() string { return in.Now.UTC().Format(time.RFC3339) }

// Event returns a fresh test event for the preset, signed inside the body
// where the provider signs there.
// A scheme declared in routes.yaml (no kit, no bespoke code) gets a generic
// JSON event.
func Event(p verify.Preset, key string, now time.Time) (Sample, error) {
	in := Input{ID: randomHex(12), Object: randomHex(12), Now: now, Key: key}
	k, ok := kits[p.Name]
	switch {
	case ok:
		return k.New(in)
	case p.Bespoke.Build == nil:
		return declared(in)
	}
	return Sample{}, fmt.Errorf("no sample event for provider %q", p.Name)
}

// declared is the sample of a scheme declared in routes.yaml: an event with
// an id, a type and a time, its id also the message id a spec may sign.
func declared(in Input) (Sample, error) {
	s, err := jsonSample(obj{"id": "evt_" + in.ID, "type": "hookgate.test", "created_at": in.RFC3339(), "data": obj{"object": in.Object}})
	s.ID = "msg_" + in.ID
	return s, err
}

// Of builds the preset's sample for a given input: a chosen object, step
// and time, as the catalog's properties send them.
func Of(p verify.Preset, in Input) (Sample, error) {
	k, ok := kits[p.Name]
	if !ok {
		return Sample{}, fmt.Errorf("no sample event for provider %q", p.Name)
	}
	return k.New(in)
}

// Sign signs a sample as the provider would for the given target URL
// and returns the headers to send with it.
func Sign(p verify.Preset, key string, s Sample, target string, now time.Time) (http.Header, error) {
	signer := kits[p.Name].Signer
	if signer == nil {
		var err error
		if signer, err = verify.SignerFor(p); err != nil {
			return nil, fmt.Errorf("provider %s cannot sign samples: %w", p.Name, err)
		}
	}
	msg := verify.Message{Body: s.Body, Method: http.MethodPost, URL: target, ID: s.ID, Header: s.Header, Time: now}
	return signer.Sign(key, msg)
}
