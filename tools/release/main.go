// Command release builds Hookgate's release artifacts, reproducibly:
//
//	go run ./tools/release [-sign-key ~/.ssh/release_ed25519] v0.1.0
//
// writes, per platform (linux/amd64 and linux/arm64):
//   - dist/hookgate_0.1.0_linux_<arch>.tar.gz: one folder with the binary,
//     README.md, CHANGELOG.md, LICENSE, the docs its pages link to, the
//     example configuration, the Prometheus rules, the Grafana dashboard
//     and the systemd unit;
//   - dist/hookgate_0.1.0_<arch>.deb: the Debian package (deb.go);
//   - dist/hookgate_0.1.0_linux_<arch>.oci.tar: an OCI image layout with
//     no base image (oci.go);
//   - a CycloneDX SBOM beside each, <artifact>.cdx.json (sbom.go);
//
// and dist/SHA256SUMS over them all, signed into SHA256SUMS.sig with
// -sign-key (an OpenSSH key, ssh-keygen -Y sign).
//
// The binary is built with CGO_ENABLED=0, -trimpath, -buildvcs=false and an
// empty build id, and stamped through Caddy's CustomVersion, so `hookgate
// version` prints "hookgate v0.1.0 v2.11.9 h1:…" (Hookgate's version, then
// Caddy's). Every archive entry gets the same owner (root), fixed modes and
// one modification time, SOURCE_DATE_EPOCH or else the time of the commit
// checked out; entries are sorted and gzip records no name or time. The same
// source, version and Go toolchain therefore give the same bytes, whoever
// builds them, and SHA256SUMS can be checked against a second build.
//
// Flags: -out (default dist), -platforms (default linux/amd64,linux/arm64),
// -sign-key.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// files are the repository files every archive carries besides the binary
// and what their pages link to (linkedFiles), by their path in the
// repository and in the archive.
var files = []string{
	"CHANGELOG.md",
	"LICENSE",
	"README.md",
	"examples/Caddyfile",
	"examples/demo.env",
	"examples/routes.yaml",
	"examples/systemd/Caddyfile",
	"examples/systemd/hookgate.env",
	"examples/systemd/hookgate.service",
	"examples/systemd/routes.yaml",
}

// versionVar is the variable Caddy offers packagers for their version; it
// is printed first by `caddy version`.
const versionVar = "github.com/caddyserver/caddy/v2.CustomVersion"

// Options say what to build and where.
type Options struct {
	// Root is the repository's root folder.
	Root string
	// Out is the folder the archives and SHA256SUMS are written to.
	Out string
	// Version is the release's version, as given (v1.2.3 or 1.2.3).
	Version string
	// Platforms are GOOS/GOARCH pairs, such as linux/amd64.
	Platforms []string
	// Epoch is the modification time of every archive entry.
	Epoch time.Time
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// SignKey, when set, is an OpenSSH private key that signs SHA256SUMS
	// (SHA256SUMS.sig, ssh-keygen -Y sign).
	SignKey string
}

// Artifact is one archive written by Release.
type Artifact struct {
	// Name is the archive's file name inside Options.Out.
	Name string
	// SHA256 is the archive's digest, in hex.
	SHA256 string
	// Size is the archive's size in bytes.
	Size int64
}

func main() {
	out := flag.String("out", "dist", "folder for the archives and SHA256SUMS")
	signKey := flag.String("sign-key", "", "OpenSSH private key that signs SHA256SUMS (ssh-keygen -Y sign)")
	platforms := flag.String("platforms", "linux/amd64,linux/arm64", "comma-separated GOOS/GOARCH pairs")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: go run ./tools/release [-out dist] [-platforms linux/amd64,linux/arm64] VERSION")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := cli(flag.Arg(0), *out, strings.Split(*platforms, ","), *signKey); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func cli(version, out string, platforms []string, signKey string) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	epoch, err := sourceDateEpoch(root)
	if err != nil {
		return err
	}
	_, err = Release(Options{Root: root, Out: out, Version: version, Platforms: platforms, Epoch: epoch, Log: os.Stdout, SignKey: signKey})
	return err
}

// repoRoot is the folder of go.mod above the working directory.
func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding go.mod: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run it inside the hookgate repository")
	}
	return filepath.Dir(gomod), nil
}

// sourceDateEpoch is the archive entries' time: SOURCE_DATE_EPOCH (see
// reproducible-builds.org) or else the committer time of HEAD.
func sourceDateEpoch(root string) (time.Time, error) {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil || sec < 0 {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970", s)
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	cmd := exec.Command("git", "log", "-1", "--format=%ct", "HEAD")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return time.Time{}, fmt.Errorf("no SOURCE_DATE_EPOCH and no git commit time (%v): set SOURCE_DATE_EPOCH", err)
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("git commit time %q: %w", out, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

var versionPattern = regexp.MustCompile(`^v?([0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?)$`)

// parseVersion checks a semantic version and returns it without its v (for
// file names, as most Go release archives are named) and the stamp that
// `hookgate version` prints.
func parseVersion(v string) (bare, stamp string, err error) {
	m := versionPattern.FindStringSubmatch(v)
	if m == nil {
		return "", "", fmt.Errorf("version %q: want MAJOR.MINOR.PATCH with an optional v and -prerelease, such as v0.1.0 or 1.2.0-rc.1", v)
	}
	return m[1], "hookgate v" + m[1], nil
}

// Release builds one archive per platform into o.Out and writes
// o.Out/SHA256SUMS for them.
func Release(o Options) ([]Artifact, error) {
	bare, stamp, err := parseVersion(o.Version)
	if err != nil {
		return nil, err
	}
	if len(o.Platforms) == 0 {
		return nil, errors.New("no platforms")
	}
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "hookgate-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	var artifacts []Artifact
	for _, p := range o.Platforms {
		goos, goarch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok || goos == "" || goarch == "" {
			return nil, fmt.Errorf("platform %q: want GOOS/GOARCH", p)
		}
		bin := filepath.Join(tmp, goos+"_"+goarch, "hookgate")
		start := time.Now()
		fmt.Fprintf(logw, "building %s/%s (a minute or two on 2 cores with an empty build cache)…\n", goos, goarch)
		if err := build(o.Root, bin, goos, goarch, stamp); err != nil {
			return nil, err
		}
		if goos == runtime.GOOS && goarch == runtime.GOARCH {
			if err := checkStamp(bin, stamp); err != nil {
				return nil, err
			}
		}
		fmt.Fprintf(logw, "built %s/%s in %s\n", goos, goarch, time.Since(start).Round(time.Second))
		stem := fmt.Sprintf("hookgate_%s_%s_%s", bare, goos, goarch)
		made := []func() (Artifact, error){
			func() (Artifact, error) { return writeArchive(o, filepath.Join(o.Out, stem+".tar.gz"), stem, bin) },
		}
		if goos == "linux" {
			made = append(made,
				func() (Artifact, error) {
					return writeDeb(o, filepath.Join(o.Out, fmt.Sprintf("hookgate_%s_%s.deb", debVersion(bare), goarch)), bin, goarch, bare)
				},
				func() (Artifact, error) {
					return writeImage(o, filepath.Join(o.Out, stem+".oci.tar"), bin, goarch, bare)
				})
		}
		for _, write := range made {
			a, err := write()
			if err != nil {
				return nil, err
			}
			sbom, err := writeSBOM(o, filepath.Join(o.Out, a.Name+".cdx.json"), a, bin, bare)
			if err != nil {
				return nil, err
			}
			for _, x := range []Artifact{a, sbom} {
				fmt.Fprintf(logw, "%s  %d bytes  %s\n", x.Name, x.Size, x.SHA256)
			}
			artifacts = append(artifacts, a, sbom)
		}
	}
	slices.SortFunc(artifacts, func(a, b Artifact) int { return strings.Compare(a.Name, b.Name) })
	var sums bytes.Buffer
	for _, a := range artifacts {
		fmt.Fprintf(&sums, "%s  %s\n", a.SHA256, a.Name) // sha256sum's format: sha256sum -c SHA256SUMS
	}
	if err := writeFileAtomic(filepath.Join(o.Out, "SHA256SUMS"), sums.Bytes()); err != nil {
		return nil, err
	}
	fmt.Fprintf(logw, "%s\n", filepath.Join(o.Out, "SHA256SUMS"))
	if o.SignKey != "" {
		if err := signSums(filepath.Join(o.Out, "SHA256SUMS"), o.SignKey); err != nil {
			return nil, err
		}
		fmt.Fprintf(logw, "%s\n", filepath.Join(o.Out, "SHA256SUMS.sig"))
	}
	return artifacts, nil
}

// build compiles the hookgate binary for one platform with everything
// that could differ between two machines pinned or left out. It builds
// from a wrapper module that requires Hookgate at the release's version
// (replaced by this checkout, a path relative to it), as xcaddy builds a
// Caddy: the binary's build information then names that version, which
// `hookgate list-modules --versions` and the build_info metric show.
func build(root, out, goos, goarch, stamp string) error {
	wrapper, err := os.MkdirTemp(root, ".release-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(wrapper)
	version := strings.TrimPrefix(stamp, "hookgate ")
	goDirective, err := goVersion(root)
	if err != nil {
		return err
	}
	gomod := fmt.Sprintf("module hookgate.dev/release\n\ngo %s\n\nrequire github.com/hookgate/hookgate %s\n\nreplace github.com/hookgate/hookgate => ../\n", goDirective, version)
	mainGo := "package main\n\nimport (\n\t_ \"github.com/caddyserver/caddy/v2/modules/standard\"\n\n\t\"github.com/hookgate/hookgate/hookgatecmd\"\n)\n\nfunc main() { hookgatecmd.Main() }\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "main.go": []byte(mainGo), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(wrapper, name), data, 0o644); err != nil {
			return err
		}
	}
	ldflags := fmt.Sprintf("-s -w -buildid= -X '%s=%s'", versionVar, stamp)
	cmd := exec.Command("go", "build", "-mod=mod", "-trimpath", "-buildvcs=false", "-ldflags="+ldflags, "-o", out, ".")
	cmd.Dir = wrapper
	cmd.Env = append(buildEnv(os.Environ(), goos, goarch), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s/%s: %v\n%s", goos, goarch, err, stderr.Bytes())
	}
	return nil
}

// goVersion is the go directive of the repository's go.mod.
func goVersion(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "go "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", errors.New("go.mod has no go directive")
}

// buildEnv is the environment minus the variables that change what the
// compiler produces, plus their release values.
func buildEnv(env []string, goos, goarch string) []string {
	pinned := map[string]string{
		"CGO_ENABLED":  "0",
		"GOOS":         goos,
		"GOARCH":       goarch,
		"GOAMD64":      "v1",
		"GOARM64":      "v8.0",
		"GOFLAGS":      "",
		"GOEXPERIMENT": "",
	}
	out := make([]string, 0, len(env)+len(pinned))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := pinned[k]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(pinned)) {
		out = append(out, k+"="+pinned[k])
	}
	return out
}

// checkStamp runs the binary built for this machine and checks that its
// version carries the stamp.
func checkStamp(bin, stamp string) error {
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s version: %v\n%s", bin, err, out)
	}
	if !strings.HasPrefix(string(out), stamp+" ") {
		return fmt.Errorf("%s version prints %q, want it to start with %q", bin, strings.TrimSpace(string(out)), stamp)
	}
	return nil
}

// entry is one file or folder of an archive.
type entry struct {
	name string // path inside the archive; folders end in /
	mode int64
	src  string // file to copy; empty for a folder
}

// markdownLink is a link of a Markdown page: the target, less its anchor.
var markdownLink = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)\s]*)?\)`)

// linkedFiles is files and every repository file their Markdown pages
// link to, page by page, so the archive holds whatever its docs point at.
func linkedFiles(root string) ([]string, error) {
	have := map[string]bool{}
	queue := slices.Clone(files)
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		if have[f] {
			continue
		}
		have[f] = true
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		for _, m := range markdownLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			rel := path.Clean(path.Join(path.Dir(f), target))
			if strings.HasPrefix(rel, "../") {
				return nil, fmt.Errorf("%s links outside the repository: %s", f, target)
			}
			if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
				return nil, fmt.Errorf("%s links to %s, which does not exist", f, target)
			} else if fi.IsDir() {
				continue // a folder link points at the repository's tree, not a file to ship
			}
			queue = append(queue, rel)
		}
	}
	return slices.Sorted(maps.Keys(have)), nil
}

// entries lists an archive's contents under the folder top, sorted, with
// every parent folder.
func entries(root, top, bin string, files []string) []entry {
	list := []entry{{name: top + "/hookgate", mode: 0o755, src: bin}}
	dirs := map[string]bool{top + "/": true}
	for _, f := range files {
		list = append(list, entry{name: top + "/" + f, mode: 0o644, src: filepath.Join(root, filepath.FromSlash(f))})
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			dirs[top+"/"+d+"/"] = true
		}
	}
	for d := range dirs {
		list = append(list, entry{name: d, mode: 0o755})
	}
	slices.SortFunc(list, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return list
}

// writeArchive writes the .tar.gz for one binary and returns its digest.
func writeArchive(o Options, dst, top, bin string) (Artifact, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return Artifact{}, err
	}
	// zw.Header stays zero: no file name, no modification time.
	tw := tar.NewWriter(zw)
	shipped, err := linkedFiles(o.Root)
	if err != nil {
		return Artifact{}, err
	}
	for _, e := range entries(o.Root, top, bin, shipped) {
		if err := addEntry(tw, e, o.Epoch); err != nil {
			return Artifact{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return Artifact{}, err
	}
	if err := zw.Close(); err != nil {
		return Artifact{}, err
	}
	return writeArtifact(dst, buf.Bytes())
}

func removeIfExists(name string) error {
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func addEntry(tw *tar.Writer, e entry, mtime time.Time) error {
	hdr := &tar.Header{
		Name:    e.name,
		Mode:    e.mode,
		ModTime: mtime,
		Uname:   "root",
		Gname:   "root",
		Format:  tar.FormatUSTAR,
	}
	if e.src == "" {
		hdr.Typeflag = tar.TypeDir
		return tw.WriteHeader(hdr)
	}
	data, err := os.ReadFile(e.src)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("archive member %s: %w", e.name, err)
		}
		return err
	}
	hdr.Typeflag = tar.TypeReg
	hdr.Size = int64(len(data))
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("archive member %s: %w", e.name, err)
	}
	_, err = tw.Write(data)
	return err
}

// writeFileAtomic replaces name with data, so an interrupted run leaves
// either the old file or the new one.
func writeFileAtomic(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".tmp-"+filepath.Base(name)+"-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}
