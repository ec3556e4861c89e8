package ingest

import (
	"fmt"
	"net/http"
	"time"

	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/verify"
)

// resigner builds an upstream's re-signing step, or nil when it has none.
//
//   - standard-webhooks: the gateway signs every delivery with its own
//     secret (webhook-id is the event id), so the backend verifies one
//     scheme whatever the provider.
//   - source: the provider's own scheme with the source's first secret and a
//     fresh timestamp, replacing the provider's signature, so a delivery
//     retried an hour late still passes the backend's tolerance check.
func resigner(cfg *config.Config, up *config.Upstream) (func(*http.Request, *store.Event, time.Time) error, error) {
	switch up.Resign.Scheme {
	case "":
		return nil, nil
	case "standard-webhooks":
		preset, _ := verify.Lookup("standard-webhooks")
		signer, err := verify.SignerFor(preset)
		if err != nil {
			return nil, err
		}
		if _, err := verify.DecodeSecret("whsec", up.Resign.Secret); err != nil {
			return nil, cfg.Errorf(up.Resign.Pos, "upstream %s: sign.secret: %v", up.Name, err)
		}
		secret := up.Resign.Secret
		return func(req *http.Request, ev *store.Event, now time.Time) error {
			h, err := signer.Sign(secret, verify.Message{Body: ev.Body, ID: ev.ID.String(), Time: now})
			if err != nil {
				return err
			}
			for k, v := range h {
				req.Header[k] = v
			}
			return nil
		}, nil
	}
	type sourceSigner struct {
		signer    verify.Signer
		secret    string
		idHeader  string
		publicURL string
	}
	signers := map[string]sourceSigner{}
	for _, src := range cfg.Sources {
		if !routesTo(src, up.Name) {
			continue
		}
		preset, ok := verify.Lookup(src.Provider)
		if !ok || !preset.Resignable() || len(src.Secrets) == 0 {
			return nil, cfg.Errorf(up.Resign.Pos, "upstream %s: sign: source cannot re-sign events of source %s (only presets signed with a shared secret can)", up.Name, src.Name)
		}
		signer, err := verify.SignerFor(preset)
		if err != nil {
			return nil, err
		}
		signers[src.Name] = sourceSigner{signer: signer, secret: src.Secrets[0], idHeader: preset.Spec.IDHeader, publicURL: src.PublicURL}
	}
	return func(req *http.Request, ev *store.Event, now time.Time) error {
		s, ok := signers[ev.Source]
		if !ok {
			return fmt.Errorf("no re-signing for source %s", ev.Source)
		}
		url := s.publicURL
		if url == "" {
			url = ev.Proto + "://" + ev.Host + ev.Path
		}
		if ev.RawQuery != "" {
			url += "?" + ev.RawQuery
		}
		msg := verify.Message{Body: ev.Body, Method: ev.Method, URL: url, Header: ev.Header, Time: now}
		if s.idHeader != "" {
			msg.ID = ev.Header.Get(s.idHeader)
		}
		h, err := s.signer.Sign(s.secret, msg)
		if err != nil {
			return err
		}
		for k, v := range h {
			req.Header[k] = v
		}
		return nil
	}, nil
}

func routesTo(src *config.Source, upstream string) bool {
	for _, u := range src.Default {
		if u == upstream {
			return true
		}
	}
	for _, u := range src.OtherModeTo {
		if u == upstream {
			return true
		}
	}
	for _, r := range src.Routes {
		for _, u := range r.To {
			if u == upstream {
				return true
			}
		}
	}
	return false
}
