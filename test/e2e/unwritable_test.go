package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// storeWriteCalls are the system calls by which bbolt changes its file.
const storeWriteCalls = "pwrite64,pwritev,pwritev2,write,writev,fsync,fdatasync,ftruncate,fallocate"

// TestStoreUnwritable makes every write to the running gateway's store files
// (the bbolt file, the write-ahead log and the body log) fail with EROFS,
// as on a read-only file system: ingest answers 503 with
// Retry-After (never a 2xx), the process keeps serving, events are accepted
// again once writes work, and after a restart every acknowledged event is
// there. A real read-only remount cannot do this: Linux refuses it (EBUSY)
// while a file on the mount is open for writing, and the store always is.
// strace injects the error into the store's write calls of the live process.
func TestStoreUnwritable(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Fatalf("this test injects write errors with strace (apt-get install strace; scripts/test.sh installs it as root): %v", err)
	}
	passthrough := newRecorder(t, "", nil)
	failing := newRecorder(t, "", func(int) int { return 503 })
	routes := "upstreams:\n  sink:\n    url: http://127.0.0.1:1\n    rate: 1/h\n    retry: {initial_interval: 1h, max_interval: 1h}\n" +
		"  failing:\n    url: http://" + failing.addr + "\n    retry: {max_attempts: 1000, initial_interval: 1s, max_interval: 1s}\n" +
		"sources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [gh-e2e-secret-0123456789]\n    default: [sink]\n" +
		"  retried:\n    path: /webhooks/retried\n    provider: github\n    secrets: [gh-e2e-secret-0123456789]\n    default: [failing]\n"
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	db := filepath.Join(dir, "data", "hookgate.db")
	g := startGateway(t, dir, port, admin)
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	send := func(n int) (int, string, string) {
		body := []byte(fmt.Sprintf(`{"n":%d}`, n))
		h := github.sign(t, body, "")
		h.Set("X-GitHub-Delivery", fmt.Sprint("ro-", n))
		status, hdr, _ := g.post("/webhooks/github", h, body)
		if status == 200 && hdr.Get("Hookgate-Duplicate") != "" {
			t.Fatalf("event %d taken for a duplicate", n)
		}
		return status, hdr.Get("Hookgate-Event-Id"), hdr.Get("Retry-After")
	}
	var acked []string
	for n := range 5 {
		status, id, _ := send(n)
		if status != 200 {
			t.Fatalf("event %d before the fault: %d", n, status)
		}
		acked = append(acked, id)
	}
	// A delivery retried every second, whose outcomes cannot be recorded
	// during the fault.
	body := []byte(`{"retried":true}`)
	h := github.sign(t, body, "")
	h.Set("X-GitHub-Delivery", "ro-retried")
	status, hdr, _ := g.post("/webhooks/retried", h, body)
	if status != 200 {
		t.Fatalf("retried event: %d", status)
	}
	acked = append(acked, hdr.Get("Hookgate-Event-Id"))
	waitFor(t, "a retry", 30*time.Second, func() bool { return len(failing.all()) >= 2 })

	traceOut := filepath.Join(dir, "strace.out")
	// The logs' segments, and the next ones a failed write moves to: on a
	// read-only file system they cannot be created either.
	args := []string{"-f", "-p", fmt.Sprint(g.cmd.Process.Pid), "-P", db}
	for _, log := range []string{db + ".wal", db + ".bodies"} {
		segs, _ := filepath.Glob(filepath.Join(log, "*.seg"))
		if len(segs) != 1 || filepath.Base(segs[0]) != "0000000000000001.seg" {
			t.Fatalf("segments in %s: %v, want the first one alone", log, segs)
		}
		for n := 1; n <= 8; n++ {
			args = append(args, "-P", filepath.Join(log, fmt.Sprintf("%016x.seg", n)))
		}
	}
	calls := storeWriteCalls + ",openat"
	strace := exec.Command("strace", append(args, "-o", traceOut,
		"-e", "trace="+calls, "-e", "inject="+calls+":error=EROFS")...)
	straceLog := &syncBuffer{}
	strace.Stderr = straceLog
	if err := strace.Start(); err != nil {
		t.Fatal(err)
	}
	detached := false
	detach := func() {
		if !detached {
			detached = true
			strace.Process.Signal(os.Interrupt)
			strace.Wait()
		}
	}
	t.Cleanup(detach)
	waitFor(t, "strace attached", 30*time.Second, func() bool { return strings.Contains(straceLog.String(), "attached") })
	faultStart, sentBefore := time.Now(), len(failing.all())
	waitFor(t, "an attempt during the fault", 30*time.Second, func() bool { return len(failing.all()) > sentBefore })

	for n := 5; n < 8; n++ {
		status, _, retryAfter := send(n)
		if status != 503 || retryAfter == "" {
			t.Fatalf("event %d on an unwritable store: %d, Retry-After %q; want 503 with Retry-After", n, status, retryAfter)
		}
	}
	// Still serving: a passthrough path and the admin API.
	if status, _, _ := g.post("/elsewhere", nil, []byte("x")); status != 200 || len(passthrough.all()) != 1 {
		t.Fatalf("passthrough while the store is unwritable: %d, %d requests upstream", status, len(passthrough.all()))
	}
	if status, ev := g.admin("GET", "/hookgate/events/"+acked[0]); status != 200 || ev["id"] != acked[0] {
		t.Fatalf("admin API while the store is unwritable: %d", status)
	}
	detach()
	// An attempt whose outcome cannot be recorded stays queued; it must not
	// go out again at once, over and over, while the store cannot write.
	if sent, most := len(failing.all())-sentBefore, 2+int(time.Since(faultStart)/time.Second); sent > most {
		t.Fatalf("%d attempts to a once-a-second retry during %s of unwritable store, want at most %d", sent, time.Since(faultStart), most)
	}
	if trace, _ := os.ReadFile(traceOut); !strings.Contains(string(trace), "EROFS (Read-only file system) (INJECTED)") {
		t.Fatalf("no write to the store failed:\n%s\n%s", trace, straceLog.String())
	}

	// Writable again: accepted, the refused events too (they were never stored).
	for n := 5; n < 9; n++ {
		status, id, _ := send(n)
		if status != 200 {
			t.Fatalf("event %d once writes work again: %d", n, status)
		}
		acked = append(acked, id)
	}
	g.kill()
	g2 := startGateway(t, dir, port, admin)
	for _, id := range acked {
		if status, ev := g2.admin("GET", "/hookgate/events/"+id); status != 200 || ev["id"] != id {
			t.Fatalf("ACKed event %s missing after a restart: %d", id, status)
		}
	}
}

// TestStoreUnwritableAtStartup: a store path on a read-only file system, in
// its folder or in a folder that cannot be created there, fails the start
// with an error that names the path.
func TestStoreUnwritableAtStartup(t *testing.T) {
	for _, storage := range []string{"./data/hookgate.db", "./data/sub/hookgate.db"} {
		t.Run(storage, func(t *testing.T) {
			dir, port, admin := newGatewayDir(t, "upstreams:\n  sink:\n    url: http://127.0.0.1:1\nsources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [s-0123456789abcdef]\n    default: [sink]\n", "127.0.0.1:1")
			caddyfile := fmt.Sprintf(caddyfileTemplate, admin, dir, port, "127.0.0.1:1")
			writeFile(t, filepath.Join(dir, "Caddyfile"), strings.Replace(caddyfile, "./data/hookgate.db", storage, 1))
			data := filepath.Join(dir, "data")
			os.MkdirAll(data, 0o700)
			if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", data).CombinedOutput(); err != nil {
				t.Fatalf("mounting a read-only tmpfs for the store (needs root, as scripts/test.sh runs): %v %s", err, out)
			}
			t.Cleanup(func() { exec.Command("umount", "-l", data).Run() })

			cmd := exec.Command(binary, "run", "--config", filepath.Join(dir, "Caddyfile"), "--adapter", "caddyfile")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
			out := &syncBuffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			var err error
			select {
			case err = <-exited:
			case <-time.After(60 * time.Second):
				cmd.Process.Signal(syscall.SIGKILL)
				<-exited
				t.Fatalf("the gateway kept running with an unwritable store:\n%s", out.String())
			}
			// The error itself names the file (the log also dumps the config).
			path := filepath.Join(dir, strings.TrimPrefix(storage, "./"))
			named := false
			for _, line := range strings.Split(out.String(), "\n") {
				if strings.Contains(line, `"level":"error"`) && strings.Contains(line, path) && strings.Contains(line, "read-only file system") {
					named = true
				}
			}
			if err == nil || !named {
				t.Fatalf("exit %v; want an error naming %s and its cause:\n%s", err, path, out.String())
			}
		})
	}
}

// TestStoreFileUnwritableBehindTheLog makes only the bbolt file unwritable,
// while the write-ahead log still takes writes: the events logged before
// the store notices are ACKed and kept in the log, then new events are
// answered 503 with Retry-After while the applier retries, and once the
// file is writable again the logged events are applied and new ones taken.
// After a kill -9 and a restart every ACKed event is there.
func TestStoreFileUnwritableBehindTheLog(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Fatalf("this test injects write errors with strace (apt-get install strace; scripts/test.sh installs it as root): %v", err)
	}
	passthrough := newRecorder(t, "", nil)
	routes := "upstreams:\n  sink:\n    url: http://127.0.0.1:1\n    rate: 1/h\n    retry: {initial_interval: 1h, max_interval: 1h}\n" +
		"sources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [gh-e2e-secret-0123456789]\n    default: [sink]\n"
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	db := filepath.Join(dir, "data", "hookgate.db")
	g := startGateway(t, dir, port, admin)
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	send := func(n int) (int, string, string) {
		body := []byte(fmt.Sprintf(`{"n":%d}`, n))
		h := github.sign(t, body, "")
		h.Set("X-GitHub-Delivery", fmt.Sprint("behind-", n))
		status, hdr, _ := g.post("/webhooks/github", h, body)
		if status == 200 && hdr.Get("Hookgate-Duplicate") != "" {
			t.Fatalf("event %d taken for a duplicate", n)
		}
		return status, hdr.Get("Hookgate-Event-Id"), hdr.Get("Retry-After")
	}
	var acked []string
	n := 0
	for ; n < 3; n++ {
		status, id, _ := send(n)
		if status != 200 {
			t.Fatalf("event %d before the fault: %d", n, status)
		}
		acked = append(acked, id)
	}
	traceOut := filepath.Join(dir, "strace.out")
	strace := exec.Command("strace", "-f", "-p", fmt.Sprint(g.cmd.Process.Pid), "-P", db, "-o", traceOut,
		"-e", "trace="+storeWriteCalls, "-e", "inject="+storeWriteCalls+":error=EROFS")
	straceLog := &syncBuffer{}
	strace.Stderr = straceLog
	if err := strace.Start(); err != nil {
		t.Fatal(err)
	}
	detached := false
	detach := func() {
		if !detached {
			detached = true
			strace.Process.Signal(os.Interrupt)
			strace.Wait()
		}
	}
	t.Cleanup(detach)
	waitFor(t, "strace attached", 30*time.Second, func() bool { return strings.Contains(straceLog.String(), "attached") })

	// Until the store refuses: each event is ACKed (logged) or refused.
	ackedDuring, refused := 0, 0
	for deadline := time.Now().Add(10 * time.Second); refused < 3; n++ {
		if time.Now().After(deadline) {
			t.Fatalf("no 503 in 10 s with the bbolt file unwritable (%d ACKed meanwhile)", ackedDuring)
		}
		status, id, retryAfter := send(n)
		switch {
		case status == 200:
			acked = append(acked, id)
			ackedDuring++
		case status == 503 && retryAfter != "":
			refused++
		default:
			t.Fatalf("event %d with the bbolt file unwritable: %d, Retry-After %q", n, status, retryAfter)
		}
	}
	if !strings.Contains(g.log.String(), "logged events to the store failed") {
		t.Fatalf("the gateway's log does not say the apply fails:\n%s", g.log.String())
	}
	detach()
	// Writable again: the applier's next try lands, and events are taken.
	waitFor(t, "events taken again", 30*time.Second, func() bool {
		status, id, _ := send(n)
		n++
		if status == 200 {
			acked = append(acked, id)
		}
		return status == 200
	})
	g.kill9()
	g2 := startGateway(t, dir, port, admin)
	for _, id := range acked {
		if status, ev := g2.admin("GET", "/hookgate/events/"+id); status != 200 || ev["id"] != id {
			t.Fatalf("ACKed event %s missing after a restart: %d", id, status)
		}
	}
	t.Logf("%d events ACKed while the bbolt file was unwritable (kept in the log), then %d refused; %d ACKed in all, all there after kill -9", ackedDuring, refused, len(acked))
}
