package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// The attacks of docs/security.md's "Findings of the third review", each
// made against the real binary.

// TestXCRCIsNoSigningOracle: X's CRC answer is the HMAC the event
// signature uses. Asked for the CRC of an event body, the gateway must
// not answer, and an event signed with any CRC answer must be refused.
func TestXCRCIsNoSigningOracle(t *testing.T) {
	up := newRecorder(t, "", nil)
	secret := "x-consumer-secret-0123456789abcdef"
	dir, port, admin := newGatewayDir(t, fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\nsources:\n  x:\n    path: /hooks/x\n    provider: x\n    secrets: [%q]\n    default: [legacy]\n", up.addr, secret), up.addr)
	g := startGateway(t, dir, port, admin)
	crc := func(token string) (int, string) {
		resp, err := http.Get(g.url("/hooks/x?crc_token=" + url.QueryEscape(token)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var answer struct {
			ResponseToken string `json:"response_token"`
		}
		json.Unmarshal(b, &answer)
		return resp.StatusCode, answer.ResponseToken
	}
	forged := []string{
		`{"for_user_id":"2244994945","tweet_create_events":[{"id_str":"1","text":"forged"}]}`,
		` {"for_user_id":"1"}`,
		`[{"for_user_id":"1"}]`,
	}
	for _, body := range forged {
		status, token := crc(body)
		if token != "" {
			t.Errorf("CRC of an event body answered %d with a response_token", status)
		}
		if status := postSigned(t, g, "/hooks/x", "X-Twitter-Webhooks-Signature", token, body); status != http.StatusUnauthorized {
			t.Errorf("event signed with the CRC answer for it: %d, want 401", status)
		}
	}
	// A token of X's shape is answered, but is no event.
	for _, token := range []string{"crc-e2e-token", "MjAxNy0wNy0xMiAxODo1NzoyNy40MTMwMTA=", "9b4507b3-9040-4669-9ca3-6b94edb50553"} {
		status, answer := crc(token)
		if status != 200 || answer == "" {
			t.Fatalf("CRC of %q: %d %q", token, status, answer)
		}
		if status := postSigned(t, g, "/hooks/x", "X-Twitter-Webhooks-Signature", answer, token); status != http.StatusUnauthorized {
			t.Errorf("token %q as an event body, signed with its CRC answer: %d, want 401", token, status)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if got := up.all(); len(got) != 0 {
		t.Fatalf("%d forged events delivered", len(got))
	}
}

// postSigned posts body with one signature header and returns the status.
func postSigned(t *testing.T, g *gateway, path, header, value, body string) int {
	t.Helper()
	h := http.Header{}
	if value != "" {
		h.Set(header, value)
	}
	status, _, _ := g.post(path, h, []byte(body))
	return status
}
