package verify

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Sample is a realistic test event for a preset, as `hookgate send` sends it.
type Sample struct {
	Body   []byte
	Header http.Header
	// ID is the message id for schemes that sign one.
	ID string
}

// SampleInput is what a preset's NewSample builds an event from.
type SampleInput struct {
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
func (in SampleInput) ObjectNumber() int64 { return hexNumber(in.Object) }

// EventNumber is ID as a positive number.
func (in SampleInput) EventNumber() int64 { return hexNumber(in.ID) }

func hexNumber(s string) int64 {
	n, _ := strconv.ParseInt(s[:min(len(s), 12)], 16, 64)
	return n + 1
}

// pick is the first event's value at Step 0, the later one's after.
func (in SampleInput) pick(first, later string) string {
	if in.Step > 0 {
		return later
	}
	return first
}

// RFC3339 is Now as the UTC date most providers put in their events.
func (in SampleInput) RFC3339() string { return in.Now.UTC().Format(time.RFC3339) }

// SampleEvent returns a fresh test event for the preset, signed inside the
// body where the provider signs there.
func (p Preset) SampleEvent(key string, now time.Time) (Sample, error) {
	if p.NewSample == nil {
		return Sample{}, fmt.Errorf("no sample event for provider %q", p.Name)
	}
	return p.NewSample(SampleInput{ID: randomHex(12), Object: randomHex(12), Now: now, Key: key})
}

// SignSample signs a sample as the provider would for the given target URL
// and returns the headers to send with it.
func SignSample(p Preset, key string, s Sample, target string, now time.Time) (http.Header, error) {
	signer := p.SampleSigner
	if signer == nil {
		if p.Build != nil && p.Signer == nil {
			return nil, fmt.Errorf("provider %s cannot sign samples", p.Name)
		}
		var err error
		if signer, err = SignerFor(p); err != nil {
			return nil, err
		}
	}
	msg := Message{Body: s.Body, Method: http.MethodPost, URL: target, ID: s.ID, Header: s.Header, Time: now}
	return signer.Sign(key, msg)
}

// SignerFor returns a signer for a preset's scheme that signs with any key
// it is given, or an error for schemes the gateway cannot sign.
func SignerFor(p Preset) (Signer, error) {
	signer := p.Signer
	if signer == nil {
		if p.Build != nil {
			return nil, fmt.Errorf("provider %s cannot be signed here", p.Name)
		}
		d, err := compileSpec(p.Spec)
		if err != nil {
			return nil, err
		}
		signer = d
	}
	if p.ObjectBodies {
		return objectSigner{signer}, nil
	}
	return signer, nil
}

// objectSigner signs only the JSON objects an ObjectBodies preset accepts.
type objectSigner struct{ Signer }

func (o objectSigner) Sign(key string, msg Message) (http.Header, error) {
	if _, ok := object(msg.Body); !ok {
		return nil, ErrNotObject
	}
	return o.Signer.Sign(key, msg)
}

// signedInBody is the SampleSigner of schemes whose signature NewSample
// puts in the body: there are no headers to add.
type signedInBody struct{}

func (signedInBody) Sign(string, Message) (http.Header, error) { return http.Header{}, nil }

// mustSigner signs as spec does, with whatever key it is given. It compiles
// the spec when it signs, not when the catalog is built, so the catalog
// does not depend on the order in which algorithms register.
func mustSigner(spec Spec) Signer { return specSigner{spec} }

type specSigner struct{ spec Spec }

func (s specSigner) Sign(key string, msg Message) (http.Header, error) {
	d, err := compileSpec(s.spec)
	if err != nil {
		return nil, err
	}
	return d.Sign(key, msg)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func uuid() string { return uuidOf(randomHex(16)) }

// uuidOf spells hex (padded to 32 digits) as a UUID.
func uuidOf(hex string) string {
	u := (hex + "00000000000000000000000000000000")[:32]
	return u[:8] + "-" + u[8:12] + "-" + u[12:16] + "-" + u[16:20] + "-" + u[20:]
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// jsonSample is a JSON event with headers given as name, value pairs.
func jsonSample(v any, header ...string) (Sample, error) {
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return Sample{Body: mustJSON(v), Header: h}, nil
}

type obj = map[string]any

// sampleSigners signs a sample with each signer in turn and sends all their
// headers: GitHub and Meta send a SHA-1 X-Hub-Signature beside the SHA-256
// one the scheme checks.
type sampleSigners []Signer

func (ss sampleSigners) Sign(key string, msg Message) (http.Header, error) {
	h := http.Header{}
	for _, s := range ss {
		signed, err := s.Sign(key, msg)
		if err != nil {
			return nil, err
		}
		for k, v := range signed {
			h[k] = v
		}
	}
	return h, nil
}

// Samples shared by several presets.

// standardWebhooksHeaders is the sample of the Standard Webhooks schemes,
// whose headers carry a prefix: "webhook", or "svix" for Svix and the
// providers that send through it (Clerk, Resend).
type standardWebhooksHeaders struct{ prefix string }

// svixUserAgent is the User-Agent of Svix's senders.
const svixUserAgent = "Svix-Webhooks/1.89.0 (sender-hookg; +https://www.svix.com/http-sender/)"

func (sw standardWebhooksHeaders) sample(in SampleInput) (Sample, error) {
	var header []string
	if sw.prefix == "svix" {
		header = []string{"User-Agent", svixUserAgent}
	}
	s, err := jsonSample(obj{"type": in.pick("user.created", "user.updated"), "timestamp": in.RFC3339(), "data": obj{"id": "user_" + in.Object, "email": "jane@example.com"}}, header...)
	s.ID = "msg_" + in.ID
	return s, err
}

func (sw standardWebhooksHeaders) sends() []string {
	names := []string{"Content-Type", sw.prefix + "-id", sw.prefix + "-timestamp", sw.prefix + "-signature"}
	if sw.prefix == "svix" {
		names = append(names, "User-Agent")
	}
	return names
}

// hubspotSample is a contact.creation event; version is the
// X-HubSpot-Signature-Version HubSpot sends with v1 and v2 signatures, empty
// for v3, which names no version.
func hubspotSample(version string) func(SampleInput) (Sample, error) {
	return func(in SampleInput) (Sample, error) {
		var header []string
		if version != "" {
			header = []string{"X-HubSpot-Signature-Version", version}
		}
		event := obj{"eventId": in.EventNumber(), "subscriptionId": 12345, "portalId": 62515, "appId": 1160452, "occurredAt": in.Now.UnixMilli(), "subscriptionType": "contact.creation",
			"attemptNumber": 0, "objectId": in.ObjectNumber(), "changeFlag": "CREATED", "changeSource": "CRM"}
		if in.Step > 0 {
			event["subscriptionType"], event["propertyName"], event["propertyValue"] = "contact.propertyChange", "lifecyclestage", "customer"
			delete(event, "changeFlag")
		}
		return jsonSample([]obj{event}, header...)
	}
}

// postmarkSample is a click on a link of message Object; a later step is
// another click on it (Postmark sends one webhook per click).
func postmarkSample(in SampleInput) (Sample, error) {
	return jsonSample(obj{"RecordType": "Click", "MessageStream": "outbound", "MessageID": uuidOf(in.Object), "Recipient": "jane@example.com", "ReceivedAt": in.RFC3339(),
		"ClickLocation": "HTML", "Platform": "Desktop", "OriginalLink": in.pick("https://example.com/a", "https://example.com/b")})
}

// metaUserAgent is the User-Agent of Meta's webhook requests.
const metaUserAgent = "facebookexternalua"

// whatsappSample is a status update of message Object: sent, then
// delivered (each a webhook of its own, about one message id).
func whatsappSample(in SampleInput) (Sample, error) {
	status := obj{"id": "wamid." + in.Object, "status": in.pick("sent", "delivered"), "timestamp": strconv.FormatInt(in.Now.Unix(), 10), "recipient_id": "16315551181"}
	return jsonSample(obj{"object": "whatsapp_business_account", "entry": []obj{{"id": "102290129340398", "changes": []obj{{"field": "messages",
		"value": obj{"messaging_product": "whatsapp", "metadata": obj{"display_phone_number": "15550783881", "phone_number_id": "106540352242922"}, "statuses": []obj{status}}}}}}},
		"User-Agent", metaUserAgent)
}

// metaSigner signs as Meta does: X-Hub-Signature-256, and the SHA-1
// X-Hub-Signature beside it.
var metaSigner = sampleSigners{mustSigner(hubSignature("X-Hub-Signature-256", "sha256=", "hmac-sha256")), mustSigner(hubSignature("X-Hub-Signature", "sha1=", "hmac-sha1"))}
