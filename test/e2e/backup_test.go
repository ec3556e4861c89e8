package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBackupUnderLoad runs `hookgate backup` while senders keep posting
// signed events, restores the snapshot into a new gateway (another folder
// whose storage is the backup file), and finds there every event ACKed
// before the backup began; their pending deliveries resume and reach the
// upstream. The backup refuses to overwrite a file without --force, and is
// refused to a browser.
func TestBackupUnderLoad(t *testing.T) {
	// The first gateway's upstream is down and retried for long, so every
	// event is still pending when the snapshot is taken.
	down := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	routes := strings.NewReplacer("max_attempts: 50", "max_attempts: 1000", "initial_interval: 50ms", "initial_interval: 1s",
		"max_interval: 300ms", "max_interval: 3s").Replace(routesFor(down))
	passthrough := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)

	sender := newLoadSender(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					sender.send(base, 3)
				}
			}
		}()
	}
	var once sync.Once
	stopLoad := func() { once.Do(func() { close(stop); wg.Wait() }) }
	defer stopLoad()
	waitFor(t, "2,000 events ACKed before the backup", 60*time.Second, func() bool { return len(sender.ackedIDs()) >= 2000 })

	restoreDir, restorePort, restoreAdmin := newGatewayDir(t, "", passthrough.addr)
	backupFile := filepath.Join(restoreDir, "data", "hookgate.db") // the new gateway's storage
	if err := os.MkdirAll(filepath.Dir(backupFile), 0o700); err != nil {
		t.Fatal(err)
	}
	before := sender.ackedIDs()
	started := time.Now()
	out, err := g.cli("backup", "--to", backupFile)
	took := time.Since(started)
	during := len(sender.ackedIDs()) - len(before)
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if !strings.Contains(out, "backed up "+filepath.Join(dir, "data", "hookgate.db")+" to "+backupFile) {
		t.Fatalf("backup said: %s", out)
	}
	info, err := os.Stat(backupFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(backupFile + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("the temporary file is left: %v", err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("backup file mode %v, want 0600: it holds bodies and secrets", info.Mode().Perm())
	}
	time.Sleep(300 * time.Millisecond) // more events after the backup, which it cannot hold
	stopLoad()
	t.Logf("snapshot of %d bytes in %s under load; %d events ACKed before it began, %d while it ran; %s",
		info.Size(), took.Round(time.Millisecond), len(before), during, strings.TrimSpace(out))

	// Never over an existing file without --force; nothing is touched.
	if out, err := g.cli("backup", "--to", backupFile); err == nil || !strings.Contains(out, "--force") {
		t.Fatalf("a second backup to the same file: %v\n%s", err, out)
	}
	if again, _ := os.Stat(backupFile); again.Size() != info.Size() || !again.ModTime().Equal(info.ModTime()) {
		t.Fatal("the refused backup changed the file")
	}
	// The snapshot holds every body and secret: not for a browser.
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/hookgate/backup", admin), nil)
	req.Header.Set("Origin", fmt.Sprintf("http://127.0.0.1:%d", admin))
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a backup asked with an Origin: %d %.200s", resp.StatusCode, body)
		}
	}

	// Restore: a new gateway on the backup file, its upstream up.
	up := newRecorder(t, "", nil)
	writeFile(t, filepath.Join(restoreDir, "routes.yaml"), routesFor(up.addr))
	restored := startGateway(t, restoreDir, restorePort, restoreAdmin)
	missing := 0
	for id := range before {
		if status, ev := restored.admin(http.MethodGet, "/hookgate/events/"+id); status != 200 || ev["id"] != id {
			if missing++; missing <= 5 {
				t.Errorf("event %s, ACKed before the backup, is not in it: %d", id, status)
			}
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d events ACKed before the backup are missing from it", missing, len(before))
	}
	// Their deliveries were pending in the snapshot: they resume.
	dups := checkDelivered(t, up, before, 90*time.Second)
	_, st := restored.admin(http.MethodGet, "/hookgate/stats")
	t.Logf("restored gateway: %v events; every one of the %d ACKed before the backup found and delivered (%d twice)", st["events"], len(before), dups)
	if dups != 0 {
		t.Errorf("%d restored events delivered twice", dups)
	}

	// --force replaces the file, and the restored gateway's own store can
	// be backed up in turn (it is the live one on its admin endpoint).
	if out, err := restored.cli("backup", "--to", filepath.Join(dir, "second.db"), "--json"); err != nil || !strings.Contains(out, `"events"`) {
		t.Fatalf("backup of the restored gateway: %v\n%s", err, out)
	}
	if out, err := g.cli("backup", "--to", filepath.Join(dir, "second.db"), "--force"); err != nil {
		t.Fatalf("backup --force: %v\n%s", err, out)
	}
}

// TestBackupRefusedForJetStream: a gateway on JetStream answers the backup
// endpoint with an error that names NATS's own tool, and the CLI fails
// without leaving a file.
func TestBackupRefusedForJetStream(t *testing.T) {
	nodes := natsCluster(t, 1)
	passthrough := newRecorder(t, "", nil)
	js := startSharedGateway(t, sharedRoutes(clientURLs(nodes), 1, passthrough.addr), passthrough.addr)
	status, body := js.adminRaw(http.MethodGet, "/hookgate/backup")
	if status != http.StatusNotImplemented || !strings.Contains(body, "nats stream backup") || !strings.Contains(body, "HGE2E_WORK") {
		t.Fatalf("backup of a JetStream store: %d %s", status, body)
	}
	file := filepath.Join(t.TempDir(), "backup.db")
	out, err := js.cli("backup", "--to", file)
	if err == nil || !strings.Contains(out, "nats stream backup") {
		t.Fatalf("hookgate backup on JetStream: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 0 {
		t.Fatalf("a refused backup left %v", entries)
	}
}
