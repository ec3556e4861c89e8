package verify

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"
)

// Sample is a realistic test event for a preset, as `hookgate send` sends it.
type Sample struct {
	Body   []byte
	Header http.Header
	// ID is the message id for schemes that sign one.
	ID string
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// SampleEvent returns a fresh test event for the preset, with unique ids so
// that each one is a new event for deduplication.
func SampleEvent(preset string, now time.Time) (Sample, error) {
	switch preset {
	case "stripe":
		body := fmt.Sprintf(`{"id":"evt_test_%s","object":"event","api_version":"2024-06-20","created":%d,"livemode":false,"type":"payment_intent.succeeded","data":{"object":{"id":"pi_test_%s","object":"payment_intent","amount":2000,"currency":"usd","status":"succeeded"}}}`,
			randomHex(12), now.Unix(), randomHex(12))
		return Sample{Body: []byte(body), Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}}, nil
	case "github":
		body := fmt.Sprintf(`{"zen":"Keep it logically awesome.","hook_id":%d,"hook":{"type":"Repository","active":true,"events":["push"]},"repository":{"id":1296269,"full_name":"octocat/Hello-World"},"sender":{"login":"octocat"}}`,
			now.Unix())
		u := randomHex(16)
		return Sample{Body: []byte(body), Header: http.Header{
			"Content-Type":      {"application/json"},
			"X-Github-Event":    {"ping"},
			"X-Github-Delivery": {u[:8] + "-" + u[8:12] + "-" + u[12:16] + "-" + u[16:20] + "-" + u[20:]},
		}}, nil
	case "standard-webhooks", "svix":
		body := fmt.Sprintf(`{"type":"user.created","timestamp":%q,"data":{"id":"user_%s","email":"jane@example.com"}}`,
			now.UTC().Format(time.RFC3339), randomHex(8))
		return Sample{Body: []byte(body), Header: http.Header{"Content-Type": {"application/json"}}, ID: "msg_" + randomHex(12)}, nil
	}
	return Sample{}, fmt.Errorf("no sample event for provider %q", preset)
}
