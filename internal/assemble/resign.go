package assemble

import (
	"slices"

	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/deliver"
	"github.com/hookgate/hookgate/internal/verify"
)

// resigner builds an upstream's re-signing step, or nil when it has none:
// standard-webhooks signs as the gateway, source as each event's provider
// (only presets signed with a shared secret can).
func resigner(cfg *config.Routes, up *config.Upstream) (deliver.SignFunc, error) {
	if up.Sign == nil {
		return nil, nil
	}
	switch up.Sign.Scheme {
	case "standard-webhooks":
		preset, _ := verify.Lookup("standard-webhooks")
		signer, err := verify.SignerFor(preset)
		if err != nil {
			return nil, err
		}
		if _, err := verify.DecodeSecret("whsec", string(up.Sign.Secret)); err != nil {
			return nil, cfg.Errorf(up.Sign.ValuePos("secret"), "upstream %s: sign.secret: %v", up.Name, err)
		}
		return deliver.SignAsGateway(signer, string(up.Sign.Secret)), nil
	}
	bySource := map[string]deliver.Resigner{}
	for _, src := range cfg.Sources {
		if !routesTo(src, up.Name) {
			continue
		}
		preset, ok := verify.Lookup(src.Provider)
		if !ok || !preset.Resignable() || len(src.Secrets) == 0 {
			return nil, cfg.Errorf(up.KeyPos("sign"), "upstream %s: sign: source cannot re-sign events of source %s (only presets signed with a shared secret can)", up.Name, src.Name)
		}
		signer, err := verify.SignerFor(preset)
		if err != nil {
			return nil, err
		}
		bySource[src.Name] = deliver.Resigner{Signer: signer, Secret: src.Secrets[0], IDHeader: preset.Spec.IDHeader, PublicURL: string(src.PublicURL)}
	}
	return deliver.SignAsSource(bySource), nil
}

// routesTo reports whether any of the source's events can go to upstream.
func routesTo(src *config.Source, upstream string) bool {
	if slices.Contains(src.Default.Names, upstream) || slices.Contains(src.OtherModeTo.Names, upstream) {
		return true
	}
	for _, r := range src.Routes {
		if slices.Contains(r.To.Names, upstream) {
			return true
		}
	}
	return false
}
