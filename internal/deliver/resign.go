package deliver

import (
	"fmt"
	"net/http"
	"time"

	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/verify"
)

// SignFunc signs a delivery request for the backend, replacing what the
// provider signed.
type SignFunc func(req *http.Request, ev *store.Event, now time.Time) error

// Resigner is one source's way to sign its events again: the provider's own
// scheme with the source's secret.
type Resigner struct {
	Signer verify.Signer
	Secret string
	// IDHeader is the header the scheme takes the message id from, if any.
	IDHeader string
	// PublicURL is the URL the provider signed, when the scheme signs the URL
	// and the gateway sits behind another address.
	PublicURL string
}

// SignAsGateway signs every delivery with the gateway's own standard-webhooks
// secret (webhook-id is the event id), so the backend verifies one scheme
// whatever the provider.
func SignAsGateway(signer verify.Signer, secret string) SignFunc {
	return func(req *http.Request, ev *store.Event, now time.Time) error {
		h, err := signer.Sign(secret, verify.Message{Body: ev.Body, ID: ev.ID.String(), Time: now})
		if err != nil {
			return err
		}
		setHeaders(req, h)
		return nil
	}
}

// SignAsSource signs each delivery with its source's scheme and a fresh
// timestamp, replacing the provider's signature, so a delivery retried an
// hour late still passes the backend's tolerance check.
func SignAsSource(bySource map[string]Resigner) SignFunc {
	return func(req *http.Request, ev *store.Event, now time.Time) error {
		s, ok := bySource[ev.Source]
		if !ok {
			return fmt.Errorf("no re-signing for source %s", ev.Source)
		}
		url := s.PublicURL
		if url == "" {
			url = ev.Proto + "://" + ev.Host + ev.Path
		}
		if ev.RawQuery != "" {
			url += "?" + ev.RawQuery
		}
		msg := verify.Message{Body: ev.Body, Method: ev.Method, URL: url, Header: ev.Header, Time: now}
		if s.IDHeader != "" {
			msg.ID = ev.Header.Get(s.IDHeader)
		}
		h, err := s.Signer.Sign(s.Secret, msg)
		if err != nil {
			return err
		}
		setHeaders(req, h)
		return nil
	}
}

func setHeaders(req *http.Request, h http.Header) {
	for k, v := range h {
		req.Header[k] = v
	}
}
