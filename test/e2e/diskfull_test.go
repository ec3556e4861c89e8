package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestDiskFull puts the store on a 2 MiB tmpfs: once it is full the gateway
// answers 503 with Retry-After (never a 2xx without a durable write), keeps
// running, accepts again when space returns, and after a restart every
// acknowledged event is there.
func TestDiskFull(t *testing.T) {
	passthrough := newRecorder(t, "", nil)
	routes := "upstreams:\n  sink:\n    url: http://127.0.0.1:1\n    rate: 1/h\n    retry: {initial_interval: 1h, max_interval: 1h}\nsources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [gh-e2e-secret-0123456789]\n    default: [sink]\n"
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o700)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", data).CombinedOutput(); err != nil {
		t.Fatalf("mounting a small tmpfs for the store (needs root, as CI runs): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", data).Run() })
	g := startGateway(t, dir, port, admin)
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	send := func(n int) (int, string, string) {
		body := []byte(fmt.Sprintf(`{"n":%d,"pad":%q}`, n, make([]byte, 3000)))
		h := github.sign(t, body, "")
		h.Set("X-GitHub-Delivery", fmt.Sprint("full-", n))
		status, hdr, _ := g.post("/webhooks/github", h, body)
		return status, hdr.Get("Hookgate-Event-Id"), hdr.Get("Retry-After")
	}
	var acked []string
	full := false
	n := 0
	for ; n < 3000 && !full; n++ {
		status, id, retryAfter := send(n)
		switch status {
		case 200:
			acked = append(acked, id)
		case 503:
			if retryAfter == "" {
				t.Fatal("503 without Retry-After")
			}
			full = true
		default:
			t.Fatalf("event %d: status %d", n, status)
		}
	}
	if !full || len(acked) == 0 {
		t.Fatalf("the disk never filled (%d ACKed)", len(acked))
	}
	// Still full: still 503, and the gateway stays up.
	if status, _, _ := send(n); status != 503 {
		t.Fatalf("second request on a full disk: %d", status)
	}
	// Space returns: accepted again.
	if out, err := exec.Command("mount", "-o", "remount,size=64m", data).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	n++
	status, id, _ := send(n)
	if status != 200 {
		t.Fatalf("after space returned: %d", status)
	}
	acked = append(acked, id)
	// Every ACKed event survives a restart, and the file opens cleanly.
	g.kill()
	g2 := startGateway(t, dir, port, admin)
	for _, id := range acked {
		if status, ev := g2.admin("GET", "/hookgate/events/"+id); status != 200 || ev["id"] != id {
			t.Fatalf("ACKed event %s missing after the disk filled: %d", id, status)
		}
	}
	t.Logf("%d events ACKed before the disk filled; 503 with Retry-After while full; accepted again after; all present after a restart", len(acked)-1)
}
