package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReleaseIsReproducible builds the release for this machine's
// architecture twice, once in-process and once through `go run
// ./tools/release` as the README says, into two folders, and requires
// byte-identical SHA256SUMS and archives; then checks what the archive
// holds, how its entries are stamped, and that the binary in it reports
// the version.
func TestReleaseIsReproducible(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("releases are linux builds; this test runs the binary it builds")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	const version, bare = "v1.2.3-rc.1", "1.2.3-rc.1"
	const epochSec = 1700000000
	platform := "linux/" + runtime.GOARCH
	archive := fmt.Sprintf("hookgate_%s_linux_%s.tar.gz", bare, runtime.GOARCH)

	first, second := t.TempDir(), t.TempDir()
	key, allowed := releaseKey(t)
	start := time.Now()
	arts, err := Release(Options{Root: root, Out: first, Version: version, Platforms: []string{platform}, Epoch: time.Unix(epochSec, 0), SignKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first release: %s", time.Since(start).Round(time.Second))
	deb := fmt.Sprintf("hookgate_%s_%s.deb", debVersion(bare), runtime.GOARCH)
	image := strings.TrimSuffix(archive, ".tar.gz") + ".oci.tar"
	var names []string
	for _, a := range arts {
		names = append(names, a.Name)
	}
	if want := []string{archive, archive + ".cdx.json", deb, deb + ".cdx.json", image, image + ".cdx.json"}; !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("artifacts %v, want %v", names, want)
	}

	start = time.Now()
	cmd := exec.Command("go", "run", "./tools/release", "-out", second, "-platforms", platform, "-sign-key", key, version)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), fmt.Sprintf("SOURCE_DATE_EPOCH=%d", epochSec))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./tools/release: %v\n%s", err, out)
	}
	t.Logf("second release (go run): %s", time.Since(start).Round(time.Second))

	sumsA := readFile(t, filepath.Join(first, "SHA256SUMS"))
	sumsB := readFile(t, filepath.Join(second, "SHA256SUMS"))
	t.Logf("SHA256SUMS:\n%s", sumsA)
	if !bytes.Equal(sumsA, sumsB) {
		t.Errorf("SHA256SUMS differ between two releases of the same tree:\n%s\n%s", sumsA, sumsB)
		diffMembers(t, filepath.Join(first, archive), filepath.Join(second, archive))
	}
	// SHA256SUMS: sha256sum -c's format, every artifact with its real
	// digest; its signature verifies with the documented command, the
	// same bytes from both runs, and not over another file.
	listed := map[string]bool{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(sumsA)), "\n") {
		digest, name, ok := strings.Cut(line, "  ")
		sum := sha256.Sum256(readFile(t, filepath.Join(first, name)))
		if !ok || digest != hex.EncodeToString(sum[:]) {
			t.Errorf("SHA256SUMS line %q is not the file's digest", line)
		}
		listed[name] = true
	}
	for _, n := range names {
		if !listed[n] {
			t.Errorf("SHA256SUMS lacks %s", n)
		}
	}
	sigA, sigB := readFile(t, filepath.Join(first, "SHA256SUMS.sig")), readFile(t, filepath.Join(second, "SHA256SUMS.sig"))
	if !bytes.Equal(sigA, sigB) {
		t.Error("the two runs' signatures differ")
	}
	verifySums := func(sums string) error {
		cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "release@hookgate.dev", "-n", "hookgate-release", "-s", filepath.Join(first, "SHA256SUMS.sig"))
		cmd.Stdin = strings.NewReader(sums)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
	if err := verifySums(string(sumsA)); err != nil {
		t.Errorf("the documented verify command refuses SHA256SUMS: %v", err)
	}
	if err := verifySums(strings.Replace(string(sumsA), "  ", "  x", 1)); err == nil {
		t.Error("the signature verifies an altered SHA256SUMS")
	}
	data := readFile(t, filepath.Join(first, archive))

	// The gzip stream records no name and no time.
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header has name %q, time %v; want neither", zr.Name, zr.ModTime)
	}

	// Every entry: sorted, owned by root, one time, fixed modes.
	top := strings.TrimSuffix(archive, ".tar.gz") + "/"
	names = nil
	var binary []byte
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		wantMode := int64(0o644)
		if strings.HasSuffix(h.Name, "/") || h.Name == top+"hookgate" {
			wantMode = 0o755
		}
		if h.Mode != wantMode || h.Uid != 0 || h.Gid != 0 || h.Uname != "root" || h.Gname != "root" || h.ModTime.Unix() != epochSec {
			t.Errorf("%s: mode %o, owner %d:%d (%s:%s), time %d; want %o, 0:0 (root:root), %d",
				h.Name, h.Mode, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime.Unix(), wantMode, epochSec)
		}
		if h.Name == top+"hookgate" {
			if binary, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		} else if h.Typeflag == tar.TypeReg {
			member, _ := io.ReadAll(tr)
			if src := readFile(t, filepath.Join(root, strings.TrimPrefix(h.Name, top))); !bytes.Equal(member, src) {
				t.Errorf("%s is not the repository's %s", h.Name, strings.TrimPrefix(h.Name, top))
			}
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("archive entries are not sorted:\n%s", strings.Join(names, "\n"))
	}
	// It holds what the docs point an operator to, and every relative link
	// of every page in it resolves inside it.
	for _, f := range []string{"CHANGELOG.md", "LICENSE", "README.md", "docs/install.md", "docs/security.md", "docs/operations.md",
		"examples/prometheus/alerts.yml", "examples/grafana/hookgate.json", "examples/systemd/hookgate.service", "examples/systemd/Caddyfile", "hookgate"} {
		if !slices.Contains(names, top+f) {
			t.Errorf("the archive lacks %s", f)
		}
	}
	for _, name := range names {
		if !strings.HasSuffix(name, ".md") {
			continue
		}
		page := readFile(t, filepath.Join(root, strings.TrimPrefix(name, top)))
		for _, m := range markdownLink.FindAllStringSubmatch(string(page), -1) {
			if strings.Contains(m[1], "://") {
				continue
			}
			target := path.Clean(path.Join(path.Dir(name), m[1]))
			if !slices.Contains(names, target) && !slices.Contains(names, target+"/") {
				t.Errorf("%s links to %s, which the archive lacks", name, m[1])
			}
		}
	}
	if binary == nil {
		t.Fatal("archive holds no binary")
	}

	bin := filepath.Join(t.TempDir(), "hookgate")
	if err := os.WriteFile(bin, binary, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "hookgate "+version+" v2.") {
		t.Errorf("hookgate version: %v %q; want \"hookgate %s v2.…\" (Hookgate's stamp, then Caddy's version)", err, out, version)
	}
	modules, err := exec.Command(bin, "list-modules", "--versions").CombinedOutput()
	if err != nil || !strings.Contains(string(modules), "http.handlers.webhook_gateway "+version+"\n") {
		t.Errorf("list-modules --versions does not show webhook_gateway at %s: %v\n%s", version, err, grepLines(string(modules), "hookgate"))
	}
	info, err := exec.Command(bin, "build-info").CombinedOutput()
	if err != nil {
		t.Fatalf("hookgate build-info: %v\n%s", err, info)
	}
	for _, line := range []string{"build\t-trimpath=true", "build\tCGO_ENABLED=0", "build\tGOOS=linux", "build\tGOARCH=" + runtime.GOARCH} {
		if !strings.Contains(string(info), line+"\n") {
			t.Errorf("build-info lacks %q", line)
		}
	}
	if strings.Contains(string(info), "vcs.") {
		t.Errorf("build-info carries VCS settings (built without -buildvcs=false?):\n%s", info)
	}
}

// diffMembers names the archive members that differ, to tell a changed
// build from a file edited between the two runs.
func diffMembers(t *testing.T, a, b string) {
	t.Helper()
	ma, mb := members(t, a), members(t, b)
	for name, da := range ma {
		if db, ok := mb[name]; !ok || !bytes.Equal(da, db) {
			t.Errorf("member %s differs", name)
		}
	}
}

func members(t *testing.T, archive string) map[string][]byte {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		m[h.Name], _ = io.ReadAll(tr)
	}
	return m
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct{ in, bare, stamp string }{
		{"v0.1.0", "0.1.0", "hookgate v0.1.0"},
		{"0.1.0", "0.1.0", "hookgate v0.1.0"},
		{"v1.20.3-rc.1", "1.20.3-rc.1", "hookgate v1.20.3-rc.1"},
		{"v1.2", "", ""},
		{"v1.2.3+meta", "", ""},
		{"v1.2.3-", "", ""},
		{"../v1.2.3", "", ""},
		{"v1.2.3 ", "", ""},
		{"v1.2.3-a'b", "", ""},
		{"", "", ""},
	} {
		bare, stamp, err := parseVersion(tc.in)
		if tc.bare == "" {
			if err == nil {
				t.Errorf("parseVersion(%q) = %q, %q; want an error", tc.in, bare, stamp)
			}
			continue
		}
		if err != nil || bare != tc.bare || stamp != tc.stamp {
			t.Errorf("parseVersion(%q) = %q, %q, %v; want %q, %q", tc.in, bare, stamp, err, tc.bare, tc.stamp)
		}
	}
}

// TestBuildEnvPinsTheCompiler checks that settings which change the
// compiler's output are replaced, whatever the caller's environment says.
func TestBuildEnvPinsTheCompiler(t *testing.T) {
	env := buildEnv([]string{"PATH=/bin", "GOFLAGS=-race", "CGO_ENABLED=1", "GOAMD64=v3", "GOARCH=386", "GOEXPERIMENT=arenas", "HOME=/h"}, "linux", "arm64")
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s set twice", k)
		}
		got[k] = v
	}
	want := map[string]string{"PATH": "/bin", "HOME": "/h", "GOFLAGS": "", "CGO_ENABLED": "0", "GOAMD64": "v1", "GOARM64": "v8.0", "GOOS": "linux", "GOARCH": "arm64", "GOEXPERIMENT": ""}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q, want %q", k, got[k], v)
		}
	}
}

// TestEntriesHaveTheirFolders checks that every member's folder precedes
// it, so extracting the archive never depends on the tool's umask.
func TestEntriesHaveTheirFolders(t *testing.T) {
	list := entries("/r", "top", "/b/hookgate", files)
	seen := map[string]bool{}
	for _, e := range list {
		dir := e.name[:strings.LastIndex(strings.TrimSuffix(e.name, "/"), "/")+1]
		if dir != "" && !seen[dir] {
			t.Errorf("%s comes before its folder %s", e.name, dir)
		}
		seen[e.name] = true
	}
	if !slices.IsSortedFunc(list, func(a, b entry) int { return strings.Compare(a.name, b.name) }) {
		t.Error("entries are not sorted")
	}
}

// releaseKey makes an Ed25519 signing key and the allowed_signers file
// that trusts it for release signatures, as docs/install.md shows.
func releaseKey(t *testing.T) (key, allowed string) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Fatal("ssh-keygen is needed (apt-get install openssh-client; scripts/test.sh installs it as root)")
	}
	dir := t.TempDir()
	key = filepath.Join(dir, "release_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "release@hookgate.dev", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub := strings.TrimSpace(string(readFile(t, key+".pub")))
	allowed = filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(allowed, []byte(`release@hookgate.dev namespaces="hookgate-release" `+pub+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return key, allowed
}
