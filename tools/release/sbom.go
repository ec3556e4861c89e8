package main

import (
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// A CycloneDX 1.5 SBOM per artifact: the Go modules its binary is built
// from, read from the binary's own build information, so the list is what
// was linked, not what go.mod asks for. Deterministic: its serial number
// derives from the artifact's digest and its time is the release's.

type cdxComponent struct {
	Type    string `json:"type"`
	BOMRef  string `json:"bom-ref,omitempty"`
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	PURL    string `json:"purl,omitempty"`
	Hashes  []struct {
		Alg     string `json:"alg"`
		Content string `json:"content"`
	} `json:"hashes,omitempty"`
}

// writeSBOM writes the SBOM of artifact a, whose binary is bin.
func writeSBOM(o Options, dst string, a Artifact, bin, bare string) (Artifact, error) {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return Artifact{}, fmt.Errorf("reading %s's build information: %w", bin, err)
	}
	var components []cdxComponent
	for _, d := range info.Deps {
		m := d
		if d.Replace != nil && !strings.HasPrefix(d.Replace.Path, ".") {
			m = d.Replace // a relative replacement is this checkout, built as the release's version
		}
		purl := "pkg:golang/" + m.Path + "@" + m.Version
		components = append(components, cdxComponent{Type: "library", BOMRef: purl, Name: m.Path, Version: m.Version, PURL: purl})
	}
	components = append(components, cdxComponent{Type: "library", BOMRef: "pkg:golang/stdlib@" + info.GoVersion, Name: "stdlib", Version: info.GoVersion, PURL: "pkg:golang/stdlib@" + info.GoVersion})
	slices.SortFunc(components, func(x, y cdxComponent) int { return strings.Compare(x.BOMRef, y.BOMRef) })
	self := cdxComponent{Type: "application", BOMRef: "pkg:generic/" + a.Name, Name: a.Name, Version: bare}
	self.Hashes = append(self.Hashes, struct {
		Alg     string `json:"alg"`
		Content string `json:"content"`
	}{"SHA-256", a.SHA256})
	serial := a.SHA256[:8] + "-" + a.SHA256[8:12] + "-5" + a.SHA256[13:16] + "-8" + a.SHA256[17:20] + "-" + a.SHA256[20:32]
	doc := map[string]any{
		"bomFormat": "CycloneDX", "specVersion": "1.5", "version": 1, "serialNumber": "urn:uuid:" + serial,
		"metadata": map[string]any{
			"timestamp": o.Epoch.UTC().Format("2006-01-02T15:04:05Z"),
			"tools":     map[string]any{"components": []map[string]string{{"type": "application", "name": "hookgate tools/release", "version": bare}}},
			"component": self,
		},
		"components":   components,
		"dependencies": []map[string]any{{"ref": self.BOMRef, "dependsOn": refs(components)}},
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return Artifact{}, err
	}
	return writeArtifact(dst, append(data, '\n'))
}

func refs(cs []cdxComponent) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.BOMRef
	}
	return out
}

// signSums signs SHA256SUMS with an OpenSSH key (ssh-keygen -Y sign,
// namespace "hookgate-release"), writing SHA256SUMS.sig beside it. An
// Ed25519 key signs deterministically, so a second run gives the same
// signature. Verify with:
//
//	ssh-keygen -Y verify -f allowed_signers -I release@hookgate.dev -n hookgate-release -s SHA256SUMS.sig < SHA256SUMS
func signSums(sums, key string) error {
	sig := sums + ".sig"
	_ = removeIfExists(sig)
	cmd := exec.Command("ssh-keygen", "-Y", "sign", "-q", "-f", key, "-n", signNamespace, sums)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("signing %s with %s: %v\n%s", filepath.Base(sums), key, err, out)
	}
	return nil
}

// signNamespace is the sshsig namespace of release signatures, so a
// signature made for anything else does not verify as one.
const signNamespace = "hookgate-release"
