package ingest

import (
	"net/http"
	"time"
)

// Hooks into the pipeline's internals for the external tests.

var (
	ReadBody      = readBody
	NewMasker     = newMasker
	IsPlainPath   = isPlainPath
	DefaultClaims = defaultClaims
	ErrBodyBudget = errBodyBudget
	ClientKey     = clientKey
)

const (
	FirstChunk    = firstChunk
	MaxLoggedBody = maxLoggedBody
)

// BodyBudget is the budget of body bytes held by requests being read.
type BodyBudget = bodyBudget

func NewBodyBudget(limit int64) *BodyBudget { return &bodyBudget{limit: limit} }

func (b *bodyBudget) Used() int64 { return b.used.Load() }

func (p *Pipeline) Bodies() *BodyBudget { return p.bodies }

// Unfinished counts the requests whose body has not fully arrived.
func (p *Pipeline) Unfinished() int {
	p.unfinished.mu.Lock()
	defer p.unfinished.mu.Unlock()
	return p.unfinished.total
}

func (p *Pipeline) SetBodies(b *BodyBudget) { p.bodies = b }

func (p *Pipeline) SetMaxBody(n int64) { p.maxBody = n }

func (p *Pipeline) SetBodyTimeout(d time.Duration) { p.bodyTimeout = d }

func (p *Pipeline) ClaimsPath(path string) bool { return p.claimsPath(path) }

// FastPath reports how the source at path reads its dedup key.
func (p *Pipeline) FastPath(path string) (dedupPath []string, needsEnv bool) {
	s := p.sources[path]
	return s.dedupPath, s.needsEnv
}

// SetClientIP replaces how the client's address is read, for a test.
func (p *Pipeline) SetClientIP(f func(*http.Request) string) { p.clientIP = f }

// SetObserver replaces the pipeline's observer, for a test.
func (p *Pipeline) SetObserver(o Observer) { p.observer = o }
