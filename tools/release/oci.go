package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// The OCI image: one layer with the static binary, CA certificates, a
// non-root user (65532) and /data as its volume, written as an OCI image
// layout in a tar (`podman load`, `docker load` from Docker 25, `skopeo
// copy oci-archive:…`). No base image is pulled from a registry. Like the
// archives, its bytes depend only on the source, the version, the Go
// toolchain and the build machine's CA bundle.

// caBundle is the build machine's CA certificates, which the image carries
// for the gateway's outbound TLS (deliveries, key fetches, ACME).
const caBundle = "/etc/ssl/certs/ca-certificates.crt"

// imageUser is the image's user and group id, with no login.
const imageUser = 65532

// imageCaddyfile serves the routes mounted at /etc/hookgate/routes.yaml on
// :8080, with the admin endpoint on a socket in the volume.
const imageCaddyfile = `# The image's Caddyfile: mount your own over it, or your routes.yaml at
# /etc/hookgate/routes.yaml. The store and Caddy's state live in /data.
{
	admin unix//data/admin.sock|0600
}

:8080 {
	webhook_gateway /etc/hookgate/routes.yaml
}
`

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// imageLayer is the image's one layer, as an uncompressed tar.
func imageLayer(o Options, bin string) ([]byte, error) {
	binary, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	certs, err := os.ReadFile(caBundle)
	if err != nil {
		return nil, fmt.Errorf("the image's CA certificates: %w (apt-get install ca-certificates)", err)
	}
	routes, err := os.ReadFile(o.Root + "/examples/systemd/routes.yaml")
	if err != nil {
		return nil, err
	}
	// The store lives in the volume.
	routes = bytes.ReplaceAll(routes, []byte("/var/lib/hookgate/"), []byte("/data/"))
	type member struct {
		name     string
		mode     int64
		data     []byte
		dir      bool
		uid, gid int
	}
	members := []member{
		{name: "data/", mode: 0o700, dir: true, uid: imageUser, gid: imageUser},
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:\nhookgate:x:%d:\n", imageUser))},
		{name: "etc/hookgate/", mode: 0o755, dir: true},
		{name: "etc/hookgate/Caddyfile", mode: 0o644, data: []byte(imageCaddyfile)},
		{name: "etc/hookgate/routes.yaml", mode: 0o644, data: routes},
		{name: "etc/passwd", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nhookgate:x:%d:%d:hookgate:/data:/sbin/nologin\n", imageUser, imageUser))},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: certs},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/bin/", mode: 0o755, dir: true},
		{name: "usr/bin/hookgate", mode: 0o755, data: binary},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range members {
		hdr := &tar.Header{Name: m.name, Mode: m.mode, ModTime: o.Epoch, Uid: m.uid, Gid: m.gid, Format: tar.FormatPAX}
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
	return buf.Bytes(), nil
}

// ociDescriptor is a content descriptor of the OCI image spec.
type ociDescriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int               `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    map[string]string `json:"platform,omitempty"`
}

func describe(mediaType string, b []byte) ociDescriptor {
	return ociDescriptor{MediaType: mediaType, Digest: "sha256:" + sha256Hex(b), Size: len(b)}
}

// writeImage writes the image layout tar for one binary.
func writeImage(o Options, dst, bin, goarch, bare string) (Artifact, error) {
	layer, err := imageLayer(o, bin)
	if err != nil {
		return Artifact{}, err
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return Artifact{}, err
	}
	zw.Write(layer)
	if err := zw.Close(); err != nil {
		return Artifact{}, err
	}
	created := o.Epoch.UTC().Format(time.RFC3339)
	config, _ := json.Marshal(map[string]any{
		"created": created, "architecture": goarch, "os": "linux",
		"config": map[string]any{
			"User":         fmt.Sprintf("%d:%d", imageUser, imageUser),
			"Entrypoint":   []string{"/usr/bin/hookgate"},
			"Cmd":          []string{"run", "--config", "/etc/hookgate/Caddyfile"},
			"Env":          []string{"XDG_DATA_HOME=/data", "XDG_CONFIG_HOME=/data", "HOME=/data", "HOOKGATE_ADMIN=unix//data/admin.sock", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
			"WorkingDir":   "/data",
			"Volumes":      map[string]any{"/data": map[string]any{}},
			"ExposedPorts": map[string]any{"8080/tcp": map[string]any{}},
			"Labels":       map[string]string{"org.opencontainers.image.version": bare, "org.opencontainers.image.title": "hookgate"},
		},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + sha256Hex(layer)}},
		"history": []map[string]string{{"created": created, "created_by": "go run ./tools/release " + bare}},
	})
	configDesc := describe("application/vnd.oci.image.config.v1+json", config)
	layerDesc := describe("application/vnd.oci.image.layer.v1.tar+gzip", gz.Bytes())
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": configDesc, "layers": []ociDescriptor{layerDesc},
		"annotations": map[string]string{"org.opencontainers.image.created": created, "org.opencontainers.image.version": bare},
	})
	manifestDesc := describe("application/vnd.oci.image.manifest.v1+json", manifest)
	manifestDesc.Annotations = map[string]string{"org.opencontainers.image.ref.name": bare}
	manifestDesc.Platform = map[string]string{"architecture": goarch, "os": "linux"}
	index, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []ociDescriptor{manifestDesc}})

	type layoutEntry struct {
		name string
		data []byte // nil for a folder
	}
	entries := []layoutEntry{{"blobs/", nil}, {"blobs/sha256/", nil}}
	for _, b := range [][]byte{config, gz.Bytes(), manifest} {
		entries = append(entries, layoutEntry{"blobs/sha256/" + sha256Hex(b), b})
	}
	entries = append(entries, layoutEntry{"index.json", index}, layoutEntry{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)})
	slices.SortFunc(entries, func(a, b layoutEntry) int { return strings.Compare(a.name, b.name) })
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: 0o644, ModTime: o.Epoch, Uname: "root", Gname: "root", Format: tar.FormatUSTAR}
		if e.data == nil {
			hdr.Typeflag, hdr.Mode = tar.TypeDir, 0o755
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return Artifact{}, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return Artifact{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return Artifact{}, err
	}
	return writeArtifact(dst, out.Bytes())
}
