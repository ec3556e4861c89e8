package bolt

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// TestBoltLearnSecretOnce races 20 handshakes for one scope, some in the
// same group commit: exactly one wins and only its secret is stored, across
// a reopen; other scopes are independent; a revoke lets one new secret in.
func TestBoltLearnSecretOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookgate.db")
	c := &clock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	s := openTest(t, path, c)
	ctx := context.Background()
	const scope = "asana https://a.example/webhooks/asana"
	var wg sync.WaitGroup
	wins := make(chan string, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			secret := fmt.Sprintf("attacker-%d", i)
			won, err := s.LearnSecret(ctx, store.LearnedSecret{Scope: scope, Source: "asana", Secret: secret, LearnedAt: c.Now()})
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
	if won, err := s.LearnSecret(ctx, store.LearnedSecret{Scope: "asana https://b.example/webhooks/asana", Source: "asana", Secret: "b"}); !won || err != nil {
		t.Fatalf("another scope: %v %v", won, err)
	}
	s.Close()

	s = openTest(t, path, c)
	got, err := s.LearnedSecret(scope)
	if err != nil || got == nil || got.Secret != winners[0] || !got.LearnedAt.Equal(c.Now()) {
		t.Fatalf("after reopening: %+v %v, want %s", got, err, winners[0])
	}
	list, err := s.LearnedSecrets()
	if err != nil || len(list) != 2 || list[0].Scope != scope || list[1].Secret != "b" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if found, err := s.RevokeSecret(ctx, scope); !found || err != nil {
		t.Fatalf("revoke: %v %v", found, err)
	}
	if got, err := s.LearnedSecret(scope); got != nil || err != nil {
		t.Fatalf("after revoke: %+v %v", got, err)
	}
	if found, _ := s.RevokeSecret(ctx, scope); found {
		t.Fatal("revoked twice")
	}
	if won, _ := s.LearnSecret(ctx, store.LearnedSecret{Scope: scope, Source: "asana", Secret: "new"}); !won {
		t.Fatal("no handshake wins after a revoke")
	}
	if won, _ := s.LearnSecret(ctx, store.LearnedSecret{Scope: scope, Source: "asana", Secret: "late"}); won {
		t.Fatal("two handshakes won after a revoke")
	}
}
