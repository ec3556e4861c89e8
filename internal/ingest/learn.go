package ingest

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/verify"
)

// SecretScope names the endpoint a learned secret belongs to: the source's
// name and its public URL (the address given to the provider, which tells two
// sites sharing a store apart and is the same on every instance, restart and
// reload), or its path when it has no public URL. Scheme and host are lower
// case and the path is in matching form, so spellings of one URL agree.
func SecretScope(name, path, publicURL string) string {
	if u, err := url.Parse(publicURL); publicURL != "" && err == nil && u.Host != "" {
		return name + " " + strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + PathKey(u.Path)
	}
	return name + " " + PathKey(path)
}

// compileLearning sets up a source whose secret a handshake establishes.
// learn_secret opens the window for it; without one, handshakes are refused.
func (s *source) compileLearning(cfg *config.Config, src *config.Source) error {
	preset, _ := verify.Lookup(src.Provider)
	s.learns = src.Provider != "" && preset.LearnsSecret
	s.scope = SecretScope(src.Name, src.Path, src.PublicURL)
	if src.LearnSecretPos == (config.Pos{}) {
		return nil
	}
	u, err := url.Parse(src.PublicURL)
	switch {
	case !s.learns:
		return cfg.Errorf(src.LearnSecretPos, "source %s: learn_secret: this source's scheme does not learn its secret in a handshake (only asana does)", src.Name)
	case len(src.Secrets) > 0:
		return cfg.Errorf(src.LearnSecretPos, "source %s: learn_secret and secrets exclude each other: with a configured secret, handshakes are refused", src.Name)
	case src.PublicURL == "" || err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return cfg.Errorf(src.LearnSecretPos, "source %s: learn_secret needs public_url, the URL given to the provider (https://host/path): the learned secret belongs to it, so two sites sharing a store never share one", src.Name)
	}
	s.learnUntil = src.LearnUntil
	return nil
}

// learnedSecret reads the source's learned secret from the store for every
// request, so that a secret learned or revoked on any instance counts at once.
func (p *Pipeline) learnedSecret(s *source) (string, error) {
	ls, err := p.store.LearnedSecret(s.scope)
	if err != nil || ls == nil {
		return "", err
	}
	return ls.Secret, nil
}

// Why a handshake that proposes a secret is refused.
const (
	learnClosed  = "learning_closed"
	learnExists  = "secret_exists"
	learnRefused = "refused"
)

// learn decides a handshake that proposes a secret: it is answered as the
// handshake asks only inside the source's window and only if the store's
// create-if-absent took the secret; otherwise 403. There is no in-memory
// check first: the store alone decides, so concurrent handshakes on any
// number of instances establish one secret.
func (p *Pipeline) learn(r *http.Request, s *source, resp *verify.HandshakeResponse) (*verify.HandshakeResponse, string, error) {
	now := p.now()
	if s.learnUntil.IsZero() || !now.Before(s.learnUntil) {
		return forbidden("no secret may be established for this endpoint now"), learnClosed, nil
	}
	won, err := p.store.LearnSecret(r.Context(), store.LearnedSecret{Scope: s.scope, Source: s.name, Secret: resp.Learn, LearnedAt: now})
	if err != nil {
		return nil, "", err
	}
	if !won {
		return forbidden("a secret is already established for this endpoint"), learnExists, nil
	}
	return resp, "", nil
}

func forbidden(msg string) *verify.HandshakeResponse {
	return &verify.HandshakeResponse{Status: http.StatusForbidden, ContentType: "text/plain; charset=utf-8", Body: []byte(msg)}
}

// handshakeAnswered counts a handshake's outcome (handshake or
// rejected_handshake) and logs it: an established secret always, at INFO; a
// refusal at INFO, sampled like other rejections; the secret never.
func (p *Pipeline) handshakeAnswered(r *http.Request, s *source, h *verify.Handshake, resp *verify.HandshakeResponse, why string, start time.Time) {
	if resp.Status < 300 {
		p.observe(s, "handshake", start)
		if resp.Learn != "" {
			p.log.Info("secret established by handshake", zap.String("source", s.name), zap.String("outcome", "handshake"),
				zap.String("handshake", h.Name), zap.String("scope", s.scope), zap.String("client_ip", p.clientIP(r)))
			return
		}
		p.log.Debug("handshake answered", zap.String("source", s.name), zap.String("handshake", h.Name))
		return
	}
	if p.observer != nil {
		p.observer.Observe(s.name, "rejected_handshake", time.Since(start))
	}
	if why == "" {
		why = learnRefused
	}
	p.rejectLog.Info("handshake refused", zap.String("source", s.name), zap.String("outcome", "rejected_handshake"),
		zap.String("handshake", h.Name), zap.String("reason", why), zap.String("client_ip", p.clientIP(r)))
}

// LearningSource is a configured source whose secret a handshake
// establishes.
type LearningSource struct {
	Source string `json:"source"`
	Scope  string `json:"scope"`
	// LearnUntil ends the source's learning window; zero when closed.
	LearnUntil time.Time `json:"learn_until,omitzero"`
}

// LearningSources lists the sources whose secret a handshake establishes.
func (p *Pipeline) LearningSources() []LearningSource {
	var out []LearningSource
	for _, s := range p.sources {
		if s.learns {
			out = append(out, LearningSource{Source: s.name, Scope: s.scope, LearnUntil: s.learnUntil})
		}
	}
	return out
}
