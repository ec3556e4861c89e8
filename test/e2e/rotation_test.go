package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSecretRotation follows the runbook in docs/operations.md, with the
// secrets in files: the new secret is added beside the old, the provider
// switches, caddy_hookgate_verified_total shows the old one unused, and it
// is removed; a sender posts all along, and no event it was answered 200
// for is lost. Then a secret file rewritten in place is applied by a plain
// reload (no --force).
func TestSecretRotation(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, "", passthrough.addr)
	const oldSecret, newSecret = "github-old-secret-0123456789", "github-new-secret-0123456789"
	oldFile, newFile := filepath.Join(dir, "old.secret"), filepath.Join(dir, "new.secret")
	writeFile(t, oldFile, oldSecret)
	writeFile(t, newFile, newSecret)
	routes := func(files ...string) string {
		var secrets []string
		for _, f := range files {
			secrets = append(secrets, fmt.Sprintf("%q", "{file."+f+"}"))
		}
		return fmt.Sprintf("upstreams:\n  app:\n    url: http://%s\nsources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [%s]\n    default: [app]\n",
			up.addr, strings.Join(secrets, ", "))
	}
	writeFile(t, filepath.Join(dir, "routes.yaml"), routes(oldFile))
	g := startGateway(t, dir, port, admin)
	reload := func(extra ...string) {
		t.Helper()
		out, err := exec.Command(binary, append([]string{"reload", "--config", filepath.Join(dir, "Caddyfile"), "--adapter", "caddyfile"}, extra...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("reload: %v\n%s", err, out)
		}
	}
	verified := func(secret string) string {
		_, metrics := g.adminRaw("GET", "/metrics")
		for _, line := range strings.Split(metrics, "\n") {
			if strings.HasPrefix(line, `caddy_hookgate_verified_total{secret="`+secret+`",source="github"}`) {
				return strings.Fields(line)[1]
			}
		}
		return "absent"
	}

	// The provider signs with signing (the old secret, then the new), a
	// request every 20 ms, all through the rotation.
	var signing atomic.Value
	signing.Store(oldSecret)
	var mu sync.Mutex
	acked, refused := map[string]string{}, map[string]int{}
	stop := make(chan struct{})
	var sent sync.WaitGroup
	sent.Add(1)
	go func() {
		defer sent.Done()
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			secret := signing.Load().(string)
			body := []byte(fmt.Sprintf(`{"zen":"rotation","n":%d}`, n))
			h := newSigner(t, "github", secret).sign(t, body, "")
			h.Set("X-GitHub-Delivery", fmt.Sprint("rotation-", n))
			status, hdr, _ := g.post("/webhooks/github", h, body)
			mu.Lock()
			if status == 200 {
				acked[hdr.Get("Hookgate-Event-Id")] = secret
			} else {
				refused[secret]++
			}
			mu.Unlock()
		}
	}()
	count := func(secret string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, s := range acked {
			if s == secret {
				n++
			}
		}
		return n
	}
	waitFor(t, "events signed with the old secret", 10*time.Second, func() bool { return count(oldSecret) >= 10 })

	// 1. The new secret beside the old: both verify.
	writeFile(t, filepath.Join(dir, "routes.yaml"), routes(newFile, oldFile))
	reload()
	if got := verified("1"); got == "absent" {
		t.Fatalf("after adding the new secret, the old one's series is %s", got)
	}
	// Each event records which secret verified it: 0 the new, 1 the old.
	for i, secret := range []string{newSecret, oldSecret} {
		body := []byte(fmt.Sprintf(`{"zen":"which","secret":%d}`, i))
		h := newSigner(t, "github", secret).sign(t, body, "")
		h.Set("X-GitHub-Delivery", fmt.Sprint("rotation-which-", i))
		status, hdr, _ := g.post("/webhooks/github", h, body)
		_, ev := g.admin("GET", "/hookgate/events/"+hdr.Get("Hookgate-Event-Id"))
		if status != 200 || ev["secret"] != float64(i) {
			t.Fatalf("an event signed with secret %d: %d, recorded secret %v", i, status, ev["secret"])
		}
	}
	// 2. The provider switches: the old secret's count stops rising.
	signing.Store(newSecret)
	waitFor(t, "events signed with the new secret", 10*time.Second, func() bool { return count(newSecret) >= 10 })
	oldCount := verified("1")
	time.Sleep(300 * time.Millisecond)
	if verified("1") != oldCount || verified("0") == "0" {
		t.Fatalf("once the provider switched: old secret %s → %s, new secret %s", oldCount, verified("1"), verified("0"))
	}
	// 3. The old secret goes.
	writeFile(t, filepath.Join(dir, "routes.yaml"), routes(newFile))
	reload()
	time.Sleep(300 * time.Millisecond)
	close(stop)
	sent.Wait()
	mu.Lock()
	if len(refused) > 0 {
		t.Fatalf("requests refused during the rotation: %v", refused)
	}
	total := len(acked)
	mu.Unlock()
	// Wait for each ACKed event by its id: the upstream may also get an
	// event whose answer the sender never read (a connection a reload
	// closed), so a count alone can be reached early.
	waitFor(t, fmt.Sprintf("every one of %d ACKed events delivered", total), 30*time.Second, func() bool {
		got := up.byEvent()
		for id := range acked {
			if len(got[id]) == 0 {
				return false
			}
		}
		return true
	})
	body := []byte(`{"zen":"old"}`)
	h := newSigner(t, "github", oldSecret).sign(t, body, "")
	h.Set("X-GitHub-Delivery", "rotation-old-after")
	if status, _, _ := g.post("/webhooks/github", h, body); status != 401 {
		t.Fatalf("the old secret after its removal: %d", status)
	}

	// A secret file rewritten in place, then a plain reload.
	const rotated = "github-rotated-in-place-0123456789"
	if err := os.WriteFile(newFile, []byte(rotated), 0o600); err != nil {
		t.Fatal(err)
	}
	reload()
	post := func(secret, id string) int {
		body := []byte(`{"zen":"` + id + `"}`)
		h := newSigner(t, "github", secret).sign(t, body, "")
		h.Set("X-GitHub-Delivery", id)
		status, _, _ := g.post("/webhooks/github", h, body)
		return status
	}
	if a, b := post(rotated, "in-place-new"), post(newSecret, "in-place-old"); a != 200 || b != 401 {
		t.Fatalf("after rewriting the secret file and a plain reload: new %d, old %d (want 200, 401)", a, b)
	}
	t.Logf("%d events ACKed through the rotation, none refused, all delivered", total)
}
