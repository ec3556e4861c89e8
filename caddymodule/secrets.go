package caddymodule

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/verify"
)

// Secrets a handshake established (Asana's X-Hook-Secret), listed and
// revoked through the admin API and `hookgate secrets`.

// SecretView describes a learned secret without revealing it.
type SecretView struct {
	Source    string    `json:"source"`
	Scope     string    `json:"scope"`
	LearnedAt time.Time `json:"learned_at"`
	// Fingerprint is the first 8 bytes of the secret's SHA-256, to tell
	// secrets apart and compare with the provider's.
	Fingerprint string `json:"fingerprint"`
}

// LearningView is a configured source whose secret a handshake establishes.
type LearningView struct {
	Source     string    `json:"source"`
	Scope      string    `json:"scope"`
	LearnUntil time.Time `json:"learn_until,omitzero"`
	WindowOpen bool      `json:"window_open"`
}

// ViewSecret describes ls without revealing it.
func ViewSecret(ls store.LearnedSecret) SecretView {
	sum := sha256.Sum256([]byte(ls.Secret))
	return SecretView{Source: ls.Source, Scope: ls.Scope, LearnedAt: ls.LearnedAt, Fingerprint: "sha256:" + hex.EncodeToString(sum[:8])}
}

// listSecrets answers GET /hookgate/secrets: the learned secrets, and the
// live sources that may learn one with their windows.
func listSecrets(w http.ResponseWriter, _ *http.Request, g *liveGateway) error {
	all, err := g.handle.store.LearnedSecrets()
	if err != nil {
		return err
	}
	out := struct {
		Secrets []SecretView   `json:"secrets"`
		Sources []LearningView `json:"sources"`
	}{Secrets: []SecretView{}, Sources: []LearningView{}}
	for _, ls := range all {
		out.Secrets = append(out.Secrets, ViewSecret(ls))
	}
	now := time.Now()
	for _, p := range g.pipelines {
		for _, s := range p.LearningSources() {
			out.Sources = append(out.Sources, LearningView{Source: s.Source, Scope: s.Scope, LearnUntil: s.LearnUntil, WindowOpen: now.Before(s.LearnUntil)})
		}
	}
	slices.SortFunc(out.Sources, func(a, b LearningView) int { return strings.Compare(a.Scope, b.Scope) })
	return writeJSON(w, out)
}

// revokeSecret answers DELETE /hookgate/secrets/{source}[?scope=].
func revokeSecret(w http.ResponseWriter, r *http.Request, g *liveGateway) error {
	source := r.PathValue("source")
	all, err := g.handle.store.LearnedSecrets()
	if err != nil {
		return err
	}
	scope := r.URL.Query().Get("scope")
	var match []store.LearnedSecret
	var scopes []string
	for _, ls := range all {
		if ls.Source == source && (scope == "" || ls.Scope == scope) {
			match = append(match, ls)
			scopes = append(scopes, ls.Scope)
		}
	}
	switch len(match) {
	case 0:
		return apiError(http.StatusNotFound, "no learned secret for source %q%s", source, inScope(scope))
	case 1:
	default:
		return apiError(http.StatusConflict, "source %q has learned secrets in several scopes; choose one with ?scope= (%s)", source, strings.Join(scopes, ", "))
	}
	found, err := g.handle.store.RevokeSecret(r.Context(), match[0].Scope)
	if err != nil {
		return err
	}
	if !found {
		return apiError(http.StatusNotFound, "no learned secret for source %q%s", source, inScope(scope))
	}
	if g.owner != nil && g.owner.logger != nil {
		g.owner.logger.Info("learned secret revoked", zap.String("source", source), zap.String("scope", match[0].Scope))
	}
	return writeJSON(w, map[string]any{"revoked": ViewSecret(match[0])})
}

// revealSecret answers POST /hookgate/secrets/{source}/reveal[?scope=]: the
// learned secret itself, for a preset whose secret the operator must copy
// into the provider (Notion's verification_token), and only while the
// source's learning window is open. Each reveal is logged, the secret never.
func revealSecret(w http.ResponseWriter, r *http.Request, g *liveGateway) error {
	source, scope := r.PathValue("source"), r.URL.Query().Get("scope")
	now := time.Now()
	var learning []ingest.LearningSource
	for _, p := range g.pipelines {
		for _, s := range p.LearningSources() {
			if s.Source == source && (scope == "" || s.Scope == scope) {
				learning = append(learning, s)
			}
		}
	}
	switch {
	case len(learning) == 0:
		return apiError(http.StatusNotFound, "no source %q%s learns a secret", source, inScope(scope))
	case len(learning) > 1:
		return apiError(http.StatusConflict, "source %q is in several scopes; choose one with ?scope=", source)
	}
	s := learning[0]
	if preset, ok := verify.Lookup(s.Provider); !ok || !preset.Keys.Reveal {
		return apiError(http.StatusForbidden, "provider %s does not need its learned secret copied back; it is never shown", s.Provider)
	}
	if !now.Before(s.LearnUntil) {
		return apiError(http.StatusForbidden, "the learning window of source %q is closed; a learned secret is shown only while it is open", source)
	}
	ls, err := g.handle.store.LearnedSecret(s.Scope)
	if err != nil {
		return err
	}
	if ls == nil {
		return apiError(http.StatusNotFound, "source %q has learned no secret yet", source)
	}
	if g.owner != nil && g.owner.logger != nil {
		g.owner.logger.Info("learned secret revealed", zap.String("source", source), zap.String("scope", s.Scope), zap.String("fingerprint", ViewSecret(*ls).Fingerprint))
	}
	return writeJSON(w, map[string]any{"source": ls.Source, "scope": ls.Scope, "learned_at": ls.LearnedAt, "secret": ls.Secret})
}

func inScope(scope string) string {
	if scope == "" {
		return ""
	}
	return " in scope " + scope
}
