// Command xcaddybuild builds Caddy with the plugins listed in an xcaddy.json
// file (xcaddy's own builder schema), using xcaddy as a library:
//
//	go run ./tools/xcaddybuild -config xcaddy.json -o hookgate
//
// Relative replacement paths are taken from the folder of the JSON file, so
// the repository's xcaddy.json builds this checkout.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/caddyserver/xcaddy"
)

func main() {
	configPath := flag.String("config", "xcaddy.json", "xcaddy builder JSON")
	output := flag.String("o", "hookgate", "output binary")
	flag.Parse()
	if err := build(*configPath, *output); err != nil {
		fmt.Fprintln(os.Stderr, "xcaddybuild:", err)
		os.Exit(1)
	}
}

func build(configPath, output string) error {
	data, err := os.ReadFile(configPath)
	if err != nil {
		return err
	}
	var builder xcaddy.Builder
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&builder); err != nil {
		return fmt.Errorf("%s: %w", configPath, err)
	}
	base, err := filepath.Abs(filepath.Dir(configPath))
	if err != nil {
		return err
	}
	for i, r := range builder.Replacements {
		target := string(r.New)
		if strings.HasPrefix(target, ".") || strings.HasPrefix(target, "/") {
			if !filepath.IsAbs(target) {
				target = filepath.Join(base, target)
			}
			builder.Replacements[i].New = xcaddy.ReplacementPath(target)
		}
	}
	return builder.Build(context.Background(), output)
}
