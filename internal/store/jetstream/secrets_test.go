package jetstream

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// TestLearnSecretOnceAcrossInstances races handshakes for one scope on two
// instances sharing the store: exactly one wins, both read the winner, a
// revoke lets a new one in, and other scopes are independent.
func TestLearnSecretOnceAcrossInstances(t *testing.T) {
	ns := runServer(t)
	a, b := open(t, ns), open(t, ns)
	ctx := context.Background()
	const scope = "asana https://a.example/webhooks/asana"
	var wg sync.WaitGroup
	wins := make(chan string, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			secret := fmt.Sprintf("attacker-%d", i)
			won, err := s.LearnSecret(ctx, store.LearnedSecret{Scope: scope, Source: "asana", Secret: secret, LearnedAt: time.Now()})
			if err != nil {
				t.Error(err)
			}
			if won {
				wins <- secret
			}
		}()
	}
	wg.Wait()
	close(wins)
	var winners []string
	for w := range wins {
		winners = append(winners, w)
	}
	if len(winners) != 1 {
		t.Fatalf("%d handshakes won: %v", len(winners), winners)
	}
	for _, s := range []*Store{a, b} {
		got, err := s.LearnedSecret(scope)
		if err != nil || got == nil || got.Secret != winners[0] || got.Source != "asana" || got.Scope != scope {
			t.Fatalf("learned secret: %+v %v, want %s", got, err, winners[0])
		}
	}
	if got, err := a.LearnedSecret("asana https://b.example/webhooks/asana"); err != nil || got != nil {
		t.Fatalf("another scope: %+v %v", got, err)
	}
	if won, err := b.LearnSecret(ctx, store.LearnedSecret{Scope: "asana https://b.example/webhooks/asana", Source: "asana", Secret: "b"}); !won || err != nil {
		t.Fatalf("another scope's first handshake: %v %v", won, err)
	}
	if list, err := a.LearnedSecrets(); err != nil || len(list) != 2 || list[0].Scope != scope {
		t.Fatalf("list: %+v %v", list, err)
	}

	if found, err := b.RevokeSecret(ctx, scope); !found || err != nil {
		t.Fatalf("revoke: %v %v", found, err)
	}
	if got, err := a.LearnedSecret(scope); err != nil || got != nil {
		t.Fatalf("after revoke: %+v %v", got, err)
	}
	if found, err := b.RevokeSecret(ctx, scope); found || err != nil {
		t.Fatalf("second revoke: %v %v", found, err)
	}
	if won, err := a.LearnSecret(ctx, store.LearnedSecret{Scope: scope, Source: "asana", Secret: "new"}); !won || err != nil {
		t.Fatalf("handshake after revoke: %v %v", won, err)
	}
	if won, _ := b.LearnSecret(ctx, store.LearnedSecret{Scope: scope, Source: "asana", Secret: "late"}); won {
		t.Fatal("a second handshake after the revoke won too")
	}
}

// TestLearnedSecretsDoNotExpire checks that the secrets bucket has no TTL:
// an expired secret would let the next handshake, from anyone, establish
// its own.
func TestLearnedSecretsDoNotExpire(t *testing.T) {
	s := open(t, runServer(t), func(o *Options) { o.Retention = time.Hour })
	ctx := context.Background()
	status, err := s.secrets.Status(ctx)
	if err != nil || status.TTL() != 0 {
		t.Fatalf("secrets bucket TTL %v (%v), want none", status.TTL(), err)
	}
	info, err := s.js.Stream(ctx, "KV_T_secrets")
	if err != nil || info.CachedInfo().Config.MaxAge != 0 {
		t.Fatalf("secrets stream: %v", err)
	}
}
