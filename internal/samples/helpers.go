package samples

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/hookgate/hookgate/internal/verify"
)

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

// signers signs a sample with each signer in turn and sends all their
// headers: GitHub and Meta send a SHA-1 X-Hub-Signature beside the SHA-256
// one the scheme checks.
type signers []verify.Signer

func (ss signers) Sign(key string, msg verify.Message) (http.Header, error) {
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

func (sw standardWebhooksHeaders) sample(in Input) (Sample, error) {
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
func hubspotSample(version string) func(Input) (Sample, error) {
	return func(in Input) (Sample, error) {
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
func postmarkSample(in Input) (Sample, error) {
	return jsonSample(obj{"RecordType": "Click", "MessageStream": "outbound", "MessageID": uuidOf(in.Object), "Recipient": "jane@example.com", "ReceivedAt": in.RFC3339(),
		"ClickLocation": "HTML", "Platform": "Desktop", "OriginalLink": in.pick("https://example.com/a", "https://example.com/b")})
}

// metaUserAgent is the User-Agent of Meta's webhook requests.
const metaUserAgent = "facebookexternalua"

// whatsappSample is a status update of message Object: sent, then
// delivered (each a webhook of its own, about one message id).
func whatsappSample(in Input) (Sample, error) {
	status := obj{"id": "wamid." + in.Object, "status": in.pick("sent", "delivered"), "timestamp": strconv.FormatInt(in.Now.Unix(), 10), "recipient_id": "16315551181"}
	return jsonSample(obj{"object": "whatsapp_business_account", "entry": []obj{{"id": "102290129340398", "changes": []obj{{"field": "messages",
		"value": obj{"messaging_product": "whatsapp", "metadata": obj{"display_phone_number": "15550783881", "phone_number_id": "106540352242922"}, "statuses": []obj{status}}}}}}},
		"User-Agent", metaUserAgent)
}

// metaSigner signs as Meta does: X-Hub-Signature-256, and the SHA-1
// X-Hub-Signature beside it.
var metaSigner = signers{verify.SpecSigner(hubSpec("X-Hub-Signature-256", "sha256=", "hmac-sha256")), verify.SpecSigner(hubSpec("X-Hub-Signature", "sha1=", "hmac-sha1"))}

// inBody is the signer of samples whose signature New puts in the body:
// there are no headers to add.
type inBody struct{}

func (inBody) Sign(string, verify.Message) (http.Header, error) { return http.Header{}, nil }

// jsonHeader is the header of a JSON body.
func jsonHeader() http.Header { return http.Header{"Content-Type": {"application/json"}} }
