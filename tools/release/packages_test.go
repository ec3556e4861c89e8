package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// stamped builds the binary with a version's stamp, as a release does.
func stamped(t *testing.T, version string) (root, bin string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(t.TempDir(), "hookgate")
	_, stamp, _ := parseVersion(version)
	if err := build(root, bin, "linux", runtime.GOARCH, stamp); err != nil {
		t.Fatal(err)
	}
	return root, bin
}

func needRoot(t *testing.T, tool string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("needs root for %s (scripts/test.sh runs as root)", tool)
	}
	if _, err := exec.LookPath(tool); err != nil {
		t.Fatalf("%s is needed", tool)
	}
}

func dpkg(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("dpkg", args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestDebInstallUpgradeRemove installs the package with dpkg, upgrades it
// to a newer build with an operator's edit in a conffile, removes it and
// purges it.
func TestDebInstallUpgradeRemove(t *testing.T) {
	needRoot(t, "dpkg")
	if exec.Command("dpkg", "-s", "hookgate").Run() == nil {
		dpkg(t, "--purge", "hookgate") // left by a run that died
	}
	userExisted := exec.Command("getent", "passwd", "hookgate").Run() == nil
	t.Cleanup(func() {
		exec.Command("dpkg", "--purge", "hookgate").Run()
		if !userExisted {
			exec.Command("userdel", "hookgate").Run()
			exec.Command("groupdel", "hookgate").Run()
		}
	})
	epoch := time.Unix(1700000000, 0)
	debs := map[string]string{}
	for _, v := range []string{"0.0.1", "0.0.2"} {
		root, bin := stamped(t, "v"+v)
		dst := filepath.Join(t.TempDir(), fmt.Sprintf("hookgate_%s_%s.deb", v, runtime.GOARCH))
		if _, err := writeDeb(Options{Root: root, Epoch: epoch}, dst, bin, runtime.GOARCH, v); err != nil {
			t.Fatal(err)
		}
		debs[v] = dst
	}
	version := func() string {
		out, err := exec.Command("/usr/bin/hookgate", "version").CombinedOutput()
		if err != nil {
			t.Fatalf("/usr/bin/hookgate version: %v\n%s", err, out)
		}
		return string(out)
	}

	out := dpkg(t, "--force-confold", "-i", debs["0.0.1"])
	if !strings.HasPrefix(version(), "hookgate v0.0.1 ") {
		t.Fatalf("installed: %s", version())
	}
	if exec.Command("getent", "passwd", "hookgate").Run() != nil {
		t.Fatalf("no hookgate user after install:\n%s", out)
	}
	fi, err := os.Stat("/etc/hookgate/hookgate.env")
	if err != nil || fi.Mode().Perm() != 0o640 || gid(fi) != lookupGID(t, "hookgate") {
		t.Fatalf("/etc/hookgate/hookgate.env: %v %v, want 0640 and group hookgate", fi.Mode(), err)
	}
	unit, err := os.ReadFile("/lib/systemd/system/hookgate.service")
	if err != nil || !strings.Contains(string(unit), "ExecStart=/usr/bin/hookgate run --config /etc/hookgate/Caddyfile") {
		t.Fatalf("the unit: %v\n%s", err, unit)
	}

	// An operator's edit survives the upgrade.
	edited := append(readFile(t, "/etc/hookgate/routes.yaml"), []byte("# edited by the operator\n")...)
	if err := os.WriteFile("/etc/hookgate/routes.yaml", edited, 0o644); err != nil {
		t.Fatal(err)
	}
	dpkg(t, "--force-confold", "-i", debs["0.0.2"])
	if !strings.HasPrefix(version(), "hookgate v0.0.2 ") {
		t.Fatalf("upgraded: %s", version())
	}
	if !bytes.Equal(readFile(t, "/etc/hookgate/routes.yaml"), edited) {
		t.Fatal("the upgrade replaced the operator's routes.yaml")
	}

	// Remove keeps the conffiles; purge deletes them.
	dpkg(t, "-r", "hookgate")
	for _, gone := range []string{"/usr/bin/hookgate", "/lib/systemd/system/hookgate.service"} {
		if _, err := os.Stat(gone); err == nil {
			t.Fatalf("%s left after dpkg -r", gone)
		}
	}
	if !bytes.Equal(readFile(t, "/etc/hookgate/routes.yaml"), edited) {
		t.Fatal("dpkg -r removed the operator's routes.yaml")
	}
	if status := dpkg(t, "-s", "hookgate"); !strings.Contains(status, "deinstall ok config-files") {
		t.Fatalf("after dpkg -r:\n%s", status)
	}
	dpkg(t, "--purge", "hookgate")
	if _, err := os.Stat("/etc/hookgate/routes.yaml"); err == nil {
		t.Fatal("/etc/hookgate/routes.yaml left after purge")
	}
}

func gid(fi os.FileInfo) uint32 { return fi.Sys().(*syscall.Stat_t).Gid }

func lookupGID(t *testing.T, group string) uint32 {
	t.Helper()
	out, err := exec.Command("getent", "group", group).Output()
	if err != nil {
		t.Fatalf("getent group %s: %v", group, err)
	}
	var n uint32
	fmt.Sscan(strings.Split(strings.TrimSpace(string(out)), ":")[2], &n)
	return n
}

// TestImageRuns unpacks the OCI image layout, checks every digest from
// index.json down to the layer, and runs the image's entrypoint in a
// chroot of the layer as its user (no container runtime runs here): the
// gateway starts with its Caddyfile, verifies a signed event, stores it in
// the /data volume as the image's user, and delivers it.
func TestImageRuns(t *testing.T) {
	needRoot(t, "chroot")
	root, bin := stamped(t, "v0.0.3")
	dst := filepath.Join(t.TempDir(), "image.oci.tar")
	if _, err := writeImage(Options{Root: root, Epoch: time.Unix(1700000000, 0)}, dst, bin, runtime.GOARCH, "0.0.3"); err != nil {
		t.Fatal(err)
	}
	layout := map[string][]byte{}
	f, err := os.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		layout[h.Name], _ = io.ReadAll(tr)
	}
	f.Close()
	if string(layout["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Fatalf("oci-layout: %s", layout["oci-layout"])
	}
	blob := func(d ociDescriptor) []byte {
		t.Helper()
		b, ok := layout["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
		if !ok || "sha256:"+sha256Hex(b) != d.Digest || len(b) != d.Size {
			t.Fatalf("blob %s: missing or not its digest and size", d.Digest)
		}
		return b
	}
	var index struct{ Manifests []ociDescriptor }
	if err := json.Unmarshal(layout["index.json"], &index); err != nil || len(index.Manifests) != 1 || index.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "0.0.3" {
		t.Fatalf("index.json: %s", layout["index.json"])
	}
	var manifest struct {
		Config ociDescriptor
		Layers []ociDescriptor
	}
	if err := json.Unmarshal(blob(index.Manifests[0]), &manifest); err != nil || len(manifest.Layers) != 1 {
		t.Fatalf("manifest: %v", err)
	}
	var config struct {
		Config struct {
			User       string
			Entrypoint []string
			Env        []string
			Volumes    map[string]any
		}
		Rootfs struct {
			DiffIDs []string `json:"diff_ids"`
		}
	}
	if err := json.Unmarshal(blob(manifest.Config), &config); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob(manifest.Layers[0])))
	if err != nil {
		t.Fatal(err)
	}
	layer, _ := io.ReadAll(zr)
	if len(config.Rootfs.DiffIDs) != 1 || config.Rootfs.DiffIDs[0] != "sha256:"+sha256Hex(layer) {
		t.Fatal("the config's diff_id is not the layer's")
	}
	if config.Config.User != "65532:65532" || config.Config.Volumes["/data"] == nil || len(config.Config.Entrypoint) != 1 {
		t.Fatalf("config: %+v", config.Config)
	}

	rootfs := t.TempDir()
	os.Chmod(rootfs, 0o755)
	lr := tar.NewReader(bytes.NewReader(layer))
	for {
		h, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(rootfs, h.Name)
		if h.Typeflag == tar.TypeDir {
			os.MkdirAll(p, 0o755)
		} else {
			data, _ := io.ReadAll(lr)
			if err := os.WriteFile(p, data, os.FileMode(h.Mode)); err != nil {
				t.Fatal(err)
			}
		}
		os.Chmod(p, os.FileMode(h.Mode)&os.ModePerm|modeBits(h.Mode))
		os.Lchown(p, h.Uid, h.Gid)
	}
	user := "--userspec=" + config.Config.User
	out, err := exec.Command("chroot", user, rootfs, config.Config.Entrypoint[0], "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "hookgate v0.0.3 ") {
		t.Fatalf("the entrypoint's version in the image: %v %s", err, out)
	}

	// The gateway, from the image's Caddyfile on a free port, as a
	// container would run it.
	var delivered atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { delivered.Add(1) }))
	defer up.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	caddyfile := strings.Replace(imageCaddyfile, ":8080", fmt.Sprintf(":%d", port), 1)
	os.WriteFile(filepath.Join(rootfs, "etc/hookgate/Caddyfile"), []byte(caddyfile), 0o644)
	const secret = "gh-image-secret-0123456789"
	os.WriteFile(filepath.Join(rootfs, "etc/hookgate/routes.yaml"), []byte(fmt.Sprintf(
		"storage:\n  path: /data/hookgate.db\nupstreams:\n  app:\n    url: %s\nsources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [%q]\n    default: [app]\n", up.URL, secret)), 0o644)
	run := exec.Command("chroot", append([]string{user, rootfs}, append(config.Config.Entrypoint, "run", "--config", "/etc/hookgate/Caddyfile")...)...)
	run.Env = config.Config.Env
	var logs bytes.Buffer
	run.Stdout, run.Stderr = &logs, &logs
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { run.Process.Kill(); run.Wait() }()
	body := []byte(`{"zen":"from the image"}`)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	var status int
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/webhooks/github", port), bytes.NewReader(body))
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
		req.Header.Set("X-GitHub-Delivery", "image-1")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if status = resp.StatusCode; status == 200 {
				break
			}
		}
	}
	if status != 200 {
		t.Fatalf("a signed event to the image's gateway: %d\n%s", status, logs.String())
	}
	for deadline := time.Now().Add(10 * time.Second); delivered.Load() == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
	}
	fi, err := os.Stat(filepath.Join(rootfs, "data", "hookgate.db"))
	if delivered.Load() != 1 || err != nil || fi.Sys().(*syscall.Stat_t).Uid != 65532 {
		t.Fatalf("delivered %d; store %v (want it in /data, owned by 65532)\n%s", delivered.Load(), err, logs.String())
	}
	// The admin socket in the volume serves the metrics, the version among them.
	admin := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", filepath.Join(rootfs, "data", "admin.sock"))
	}}}
	resp, err := admin.Get("http://127.0.0.1/metrics")
	if err != nil {
		t.Fatalf("the admin socket in /data: %v", err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), `caddy_hookgate_build_info{caddy_version="v2.11.9",version="v0.0.3"} 1`) {
		t.Fatalf("the metrics lack the build's version:\n%s", grepLines(string(metrics), "build_info"))
	}
}

// modeBits are the sticky, setuid and setgid bits of a tar mode.
func modeBits(mode int64) os.FileMode {
	var m os.FileMode
	if mode&0o1000 != 0 {
		m |= os.ModeSticky
	}
	return m
}

func grepLines(text, word string) string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.Contains(line, word) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
