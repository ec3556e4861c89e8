package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The Debian package: /usr/bin/hookgate, the hardened unit (its
// ExecStart pointing there), the example configuration in /etc/hookgate as
// conffiles, and the docs. Its maintainer scripts create the hookgate
// system user and group, give the secrets file to that group, and reload
// systemd; the service is enabled but not started, since the
// configuration needs its secrets and domain first. Built with fixed
// owners, modes and times, like the archives, so two runs give one file.

// debFile is one file of the package's data, by its installed path.
type debFile struct {
	path string
	mode int64
	data []byte
}

// debVersion is a release version as dpkg orders it: a prerelease sorts
// before its release (1.2.3~rc.1 < 1.2.3).
func debVersion(bare string) string { return strings.Replace(bare, "-", "~", 1) }

// debConffiles are the package's conffiles: dpkg keeps an operator's
// edits on upgrade and leaves them on remove (purge deletes them).
var debConffiles = []string{"/etc/hookgate/Caddyfile", "/etc/hookgate/hookgate.env", "/etc/hookgate/routes.yaml"}

const debPostinst = `#!/bin/sh
set -e
if [ "$1" = configure ]; then
	if ! getent group hookgate >/dev/null; then
		groupadd --system hookgate
	fi
	if ! getent passwd hookgate >/dev/null; then
		useradd --system --gid hookgate --home-dir /var/lib/hookgate --no-create-home --shell /usr/sbin/nologin hookgate
	fi
	chgrp hookgate /etc/hookgate/hookgate.env
	chmod 0640 /etc/hookgate/hookgate.env
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload
		systemctl enable hookgate.service >/dev/null 2>&1 || true
		if systemctl is-active --quiet hookgate.service; then
			systemctl restart hookgate.service
		else
			echo "hookgate: set the domain in /etc/hookgate/Caddyfile and the secrets in /etc/hookgate/hookgate.env, then: systemctl start hookgate"
		fi
	fi
fi
`

const debPrerm = `#!/bin/sh
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
	systemctl stop hookgate.service || true
	systemctl disable hookgate.service >/dev/null 2>&1 || true
fi
`

const debPostrm = `#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
# The store in /var/lib/hookgate and the hookgate user stay, as Debian
# leaves a system user's data: remove them by hand once nothing is pending.
`

// debFiles are the package's data files.
func debFiles(root, bin string) ([]debFile, error) {
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(root, filepath.FromSlash(name))) }
	binary, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	unit, err := read("examples/systemd/hookgate.service")
	if err != nil {
		return nil, err
	}
	unit = bytes.ReplaceAll(unit, []byte("/usr/local/bin/hookgate"), []byte("/usr/bin/hookgate"))
	out := []debFile{
		{"/usr/bin/hookgate", 0o755, binary},
		{"/lib/systemd/system/hookgate.service", 0o644, unit},
	}
	for _, f := range []struct{ dst, src string }{
		{"/etc/hookgate/Caddyfile", "examples/systemd/Caddyfile"},
		{"/etc/hookgate/routes.yaml", "examples/systemd/routes.yaml"},
		{"/etc/hookgate/hookgate.env", "examples/systemd/hookgate.env"},
		{"/usr/share/doc/hookgate/copyright", "LICENSE"},
		{"/usr/share/doc/hookgate/README.md", "README.md"},
		{"/usr/share/doc/hookgate/CHANGELOG.md", "CHANGELOG.md"},
		{"/usr/share/doc/hookgate/install.md", "docs/install.md"},
		{"/usr/share/doc/hookgate/operations.md", "docs/operations.md"},
		{"/usr/share/doc/hookgate/configuration.md", "docs/configuration.md"},
	} {
		data, err := read(f.src)
		if err != nil {
			return nil, err
		}
		mode := int64(0o644)
		if strings.HasSuffix(f.dst, ".env") {
			mode = 0o640
		}
		out = append(out, debFile{f.dst, mode, data})
	}
	return out, nil
}

// writeDeb writes the package for one binary and returns its digest.
func writeDeb(o Options, dst, bin, goarch, bare string) (Artifact, error) {
	files, err := debFiles(o.Root, bin)
	if err != nil {
		return Artifact{}, err
	}
	var installed int64
	for _, f := range files {
		installed += int64(len(f.data))
	}
	control := fmt.Sprintf(`Package: hookgate
Version: %s
Architecture: %s
Maintainer: Hookgate <release@hookgate.dev>
Installed-Size: %d
Depends: passwd
Section: web
Priority: optional
Homepage: https://github.com/hookgate/hookgate
Description: webhook ingress gateway inside Caddy
 Caddy with the Hookgate webhook gateway: every provider signature verified,
 retries deduplicated, a durable 2xx once the event is on disk, and
 asynchronous delivery with retries, dead letters and replay.
`, debVersion(bare), goarch, (installed+1023)/1024)
	controlTar, err := tarGz(o.Epoch, []debFile{
		{"./control", 0o644, []byte(control)},
		{"./conffiles", 0o644, []byte(strings.Join(debConffiles, "\n") + "\n")},
		{"./postinst", 0o755, []byte(debPostinst)},
		{"./prerm", 0o755, []byte(debPrerm)},
		{"./postrm", 0o755, []byte(debPostrm)},
	})
	if err != nil {
		return Artifact{}, err
	}
	data := make([]debFile, len(files))
	for i, f := range files {
		data[i] = debFile{"." + f.path, f.mode, f.data}
	}
	dataTar, err := tarGz(o.Epoch, data)
	if err != nil {
		return Artifact{}, err
	}
	var deb bytes.Buffer
	deb.WriteString("!<arch>\n")
	for _, m := range []struct {
		name string
		data []byte
	}{{"debian-binary", []byte("2.0\n")}, {"control.tar.gz", controlTar}, {"data.tar.gz", dataTar}} {
		// ar member header: name/16, mtime/12, uid/6, gid/6, mode/8, size/10, "`\n".
		fmt.Fprintf(&deb, "%-16s%-12d%-6d%-6d%-8s%-10d`\n", m.name, o.Epoch.Unix(), 0, 0, "100644", len(m.data))
		deb.Write(m.data)
		if len(m.data)%2 == 1 {
			deb.WriteByte('\n')
		}
	}
	return writeArtifact(dst, deb.Bytes())
}

// tarGz is a gzipped tar of files with their folders, owned by root, at
// one time, sorted.
func tarGz(epoch time.Time, files []debFile) ([]byte, error) {
	// Names as dpkg-deb writes them: ./etc/, ./etc/hookgate/Caddyfile.
	dirs := map[string]bool{}
	for _, f := range files {
		for d := path.Dir(path.Clean(f.path)); d != "." && d != "/"; d = path.Dir(d) {
			dirs["./"+d+"/"] = true
		}
	}
	type member struct {
		name string
		mode int64
		data []byte
		dir  bool
	}
	var all []member
	for d := range dirs {
		all = append(all, member{name: d, mode: 0o755, dir: true})
	}
	for _, f := range files {
		all = append(all, member{name: "./" + path.Clean(f.path), mode: f.mode, data: f.data})
	}
	slices.SortFunc(all, func(a, b member) int { return strings.Compare(a.name, b.name) })
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, m := range all {
		hdr := &tar.Header{Name: m.name, Mode: m.mode, ModTime: epoch, Uname: "root", Gname: "root", Format: tar.FormatGNU}
		if m.dir {
			hdr.Typeflag = tar.TypeDir
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(m.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(m.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeArtifact writes data as dst and returns its digest.
func writeArtifact(dst string, data []byte) (Artifact, error) {
	if err := writeFileAtomic(dst, data); err != nil {
		return Artifact{}, err
	}
	return Artifact{Name: filepath.Base(dst), SHA256: sha256Hex(data), Size: int64(len(data))}, nil
}
