package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The Debian caddy package's files, as docs/install.md ("I already run
// Caddy") names them.
const (
	packagedBinary    = "/usr/bin/caddy"
	divertedBinary    = "/usr/bin/caddy.distrib"
	packagedCaddyfile = "/etc/caddy/Caddyfile"
	packagedUnit      = "/lib/systemd/system/caddy.service"
	packagedRoutes    = "/etc/caddy/routes.yaml"
	caddyHome         = "/var/lib/caddy"
)

// unitCommand is a command line of the packaged unit (ExecStart=,
// ExecReload=).
func unitCommand(t *testing.T, key string) []string {
	t.Helper()
	f, err := os.Open(packagedUnit)
	if err != nil {
		t.Fatalf("the caddy package's unit: %v (apt-get install caddy; scripts/test.sh installs it as root)", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+"="); ok {
			return strings.Fields(v)
		}
	}
	t.Fatalf("%s has no %s", packagedUnit, key)
	return nil
}

// asCaddyUser runs a command line as systemd would run the unit's: as the
// caddy user, with the environment systemd gives it.
func asCaddyUser(args ...string) *exec.Cmd {
	full := append([]string{"-u", "caddy", "--", "env", "-i", "HOME=" + caddyHome, "USER=caddy", "LOGNAME=caddy", "SHELL=/usr/sbin/nologin",
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, args...)
	return exec.Command("runuser", full...)
}

func caddyVersion(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(packagedBinary, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", packagedBinary, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestIntoThePackagedCaddy follows docs/install.md's "I already run
// Caddy" on Debian's caddy package, running the unit's own ExecStart and
// ExecReload command lines as the caddy user (systemd is not PID 1 here):
// the packaged binary is diverted and a Caddy with Hookgate put in its
// place; the site already served keeps being served; a webhook_gateway
// block added to /etc/caddy/Caddyfile and a reload make events verified,
// stored under the caddy user's data folder and delivered; removing
// Hookgate restores the packaged binary.
func TestIntoThePackagedCaddy(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root: it diverts /usr/bin/caddy (scripts/test.sh runs as root)")
	}
	start, reload := unitCommand(t, "ExecStart"), unitCommand(t, "ExecReload")
	if start[0] != packagedBinary || reload[0] != packagedBinary {
		t.Fatalf("the unit runs %s and %s, not %s", start[0], reload[0], packagedBinary)
	}
	// A run of this test that died half-way is undone first.
	if _, err := os.Stat(divertedBinary); err == nil {
		os.Remove(packagedBinary)
		exec.Command("dpkg-divert", "--rename", "--remove", packagedBinary).Run()
	}
	packaged := caddyVersion(t)
	if strings.Contains(packaged, "hookgate") {
		t.Fatalf("%s is not the packaged Caddy: %s", packagedBinary, packaged)
	}
	original, err := os.ReadFile(packagedCaddyfile)
	if err != nil {
		t.Fatal(err)
	}
	storeDir := filepath.Join(caddyHome, ".local", "share", "caddy", "hookgate")
	t.Cleanup(func() {
		os.WriteFile(packagedCaddyfile, original, 0o644)
		os.Remove(packagedRoutes)
		os.RemoveAll(storeDir)
		if _, err := os.Stat(divertedBinary); err == nil {
			os.Remove(packagedBinary)
			exec.Command("dpkg-divert", "--rename", "--remove", packagedBinary).Run()
		}
	})

	// The site this VM already serves: the package's own, on a free port.
	site, admin, hooks := freePort(t), freePort(t), freePort(t)
	served := fmt.Sprintf("{\n\tadmin localhost:%d\n}\n\n:%d {\n\troot * /usr/share/caddy\n\tfile_server\n}\n", admin, site)
	writeFile(t, packagedCaddyfile, served)
	os.Chmod(packagedCaddyfile, 0o644)
	welcome := func() int {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", site))
		if err != nil {
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	run := func() (*exec.Cmd, *syncBuffer) {
		t.Helper()
		log := &syncBuffer{}
		cmd := asCaddyUser(start...)
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
		waitFor(t, "the site served", 20*time.Second, func() bool { return welcome() == 200 })
		return cmd, log
	}
	stop := func(cmd *exec.Cmd) {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		cmd.Wait()
	}
	before, _ := run()
	stop(before)

	// Install: divert the packaged binary, put a Caddy with Hookgate in
	// its place (docs/install.md builds it with xcaddy or go build).
	if out, err := exec.Command("dpkg-divert", "--local", "--divert", divertedBinary, "--rename", "--add", packagedBinary).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-divert: %v\n%s", err, out)
	}
	copyFile(t, binary, packagedBinary, 0o755)
	if v := caddyVersion(t); !strings.HasPrefix(v, "v2.11") {
		t.Fatalf("the installed binary says %s", v)
	}
	if out, _ := exec.Command(packagedBinary, "list-modules").CombinedOutput(); !strings.Contains(string(out), "http.handlers.webhook_gateway") {
		t.Fatalf("the installed binary lacks webhook_gateway:\n%s", out)
	}
	g, glog := run()
	if welcome() != 200 {
		t.Fatal("the site is not served by the Caddy with Hookgate")
	}

	// Add a webhook_gateway block and reload with the unit's ExecReload.
	up := newRecorder(t, "", nil)
	writeFile(t, packagedRoutes, fmt.Sprintf("upstreams:\n  app:\n    url: http://%s\nsources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [gh-e2e-secret-0123456789]\n    default: [app]\n", up.addr))
	os.Chmod(packagedRoutes, 0o644)
	writeFile(t, packagedCaddyfile, served+fmt.Sprintf("\n:%d {\n\twebhook_gateway %s\n}\n", hooks, packagedRoutes))
	os.Chmod(packagedCaddyfile, 0o644)
	if out, err := asCaddyUser(reload...).CombinedOutput(); err != nil {
		t.Fatalf("the unit's ExecReload: %v\n%s\n%s", err, out, glog.String())
	}
	gw := &gateway{t: t, port: hooks, adminPort: admin}
	var ids map[string][]byte
	waitFor(t, "the webhook site", 20*time.Second, func() bool {
		status, _, _ := gw.post("/webhooks/github", nil, []byte(`{}`))
		return status == 401
	})
	ids = gw.ackGitHubEvents(t, "packaged", 3)
	waitFor(t, "the 3 events delivered", 20*time.Second, func() bool { return len(up.byEvent()) == 3 })
	for id := range ids {
		if len(up.byEvent()[id]) != 1 {
			t.Fatalf("event %s delivered %d times", id, len(up.byEvent()[id]))
		}
	}
	if status, _, _ := gw.post("/webhooks/github", nil, []byte(`{"forged":true}`)); status != 401 {
		t.Fatalf("an unsigned request: %d", status)
	}
	if welcome() != 200 {
		t.Fatal("the site stopped being served after the reload")
	}
	fi, err := os.Stat(filepath.Join(storeDir, "hookgate.db"))
	if err != nil {
		t.Fatalf("the store is not under the caddy user's data folder: %v\n%s", err, glog.String())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || lookupUID(t, "caddy") != st.Uid {
		t.Fatalf("the store is not the caddy user's")
	}
	stop(g)

	// Remove Hookgate: the packaged binary is back.
	os.Remove(packagedBinary)
	if out, err := exec.Command("dpkg-divert", "--rename", "--remove", packagedBinary).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-divert --remove: %v\n%s", err, out)
	}
	if v := caddyVersion(t); v != packaged {
		t.Fatalf("after removing Hookgate %s says %s, want %s", packagedBinary, v, packaged)
	}
	writeFile(t, packagedCaddyfile, served)
	after, _ := run()
	stop(after)
	t.Logf("packaged %s diverted, Hookgate in its place: site served throughout, 3 events verified, stored in %s and delivered; the packaged binary restored", packaged, storeDir)
}

func lookupUID(t *testing.T, user string) uint32 {
	t.Helper()
	out, err := exec.Command("id", "-u", user).Output()
	if err != nil {
		t.Fatal(err)
	}
	var uid uint32
	fmt.Sscan(strings.TrimSpace(string(out)), &uid)
	return uid
}
