package ingest

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

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

// learnedSecret reads the source's learned secret from the store for every
// request, so that a secret learned or revoked on any instance counts at once.
func (p *Pipeline) learnedSecret(s *source) (string, error) {
	ls, err := p.store.LearnedSecret(s.Scope)
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
	if s.LearnUntil.IsZero() || !now.Before(s.LearnUntil) {
		return forbidden("no secret may be established for this endpoint now"), learnClosed, nil
	}
	won, err := p.store.LearnSecret(r.Context(), store.LearnedSecret{Scope: s.Scope, Source: s.Name, Secret: resp.Learn, LearnedAt: now})
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
			p.log.Info("secret established by handshake", zap.String("source", s.Name), zap.String("outcome", "handshake"),
				zap.String("handshake", h.Name), zap.String("scope", s.Scope), zap.String("client_ip", p.clientIP(r)))
			return
		}
		p.log.Debug("handshake answered", zap.String("source", s.Name), zap.String("handshake", h.Name))
		return
	}
	if p.observer != nil {
		p.observer.Observe(s.Name, "rejected_handshake", time.Since(start))
	}
	if why == "" {
		why = learnRefused
	}
	p.rejectLog.Info("handshake refused", zap.String("source", s.Name), zap.String("outcome", "rejected_handshake"),
		zap.String("handshake", h.Name), zap.String("reason", why), zap.String("client_ip", p.clientIP(r)))
}

// LearningSource is a configured source whose secret a handshake
// establishes.
type LearningSource struct {
	Source string `json:"source"`
	Scope  string `json:"scope"`
	// Provider is the source's preset.
	Provider string `json:"provider"`
	// LearnUntil ends the source's learning window; zero when closed.
	LearnUntil time.Time `json:"learn_until,omitzero"`
}

// LearningSources lists the sources whose secret a handshake establishes.
func (p *Pipeline) LearningSources() []LearningSource {
	var out []LearningSource
	for _, s := range p.sources {
		if s.Learns {
			out = append(out, LearningSource{Source: s.Name, Scope: s.Scope, Provider: s.Provider, LearnUntil: s.LearnUntil})
		}
	}
	return out
}
