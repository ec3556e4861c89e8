package verify

import (
	"net/http"
	"strings"
	"testing"
)

// Hostile handshake requests are refused or answered within bounds, never
// with a panic.
func TestHandshakeRequestsNeverPanic(t *testing.T) {
	inputs := []*HandshakeRequest{
		{Method: "POST", Header: http.Header{}, Body: nil},
		{Method: "POST", Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, Body: []byte("%zz")},
		{Method: "POST", Header: http.Header{"Twitch-Eventsub-Message-Type": {"webhook_callback_verification"}}, Body: []byte(`{"challenge":12}`)},
		{Method: "GET", Header: http.Header{}, Body: []byte(`{"type":"url_verification","challenge":` + strings.Repeat(`"x`, 1) + `}`)},
		{Method: "POST", Header: http.Header{}, Body: []byte(`{"event":"endpoint.url_validation","payload":null}`)},
		{Method: "POST", Header: http.Header{}, Body: []byte(`{"type":"url_verification","challenge":"` + strings.Repeat("x", 5000) + `"}`)},
	}
	for _, p := range Presets() {
		for _, h := range p.Handshakes {
			for _, in := range inputs {
				if resp, ok := h.Answer(in); ok && resp.Status == http.StatusOK && len(resp.Body) > maxChallenge+100 {
					t.Errorf("%s reflected %d bytes", h.Name, len(resp.Body))
				}
			}
		}
	}
}
