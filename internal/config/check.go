package config

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// crossCheck checks what spans sections, once every value is read: paths
// used once, upstream names that exist, settings that need one another,
// and names the gateway keeps for itself.
func (r *Routes) crossCheck(d *decoder) {
	r.checkJetStream(d)
	for i, a := range r.Alerts {
		if a.On.StoreSize > 0 && r.Storage.MaxSize == 0 {
			d.errorAt(a.ValuePos("on"), "alerts[%d].on.store_size is a share of storage.max_size: set max_size", i)
		}
	}
	r.checkReserved(d)
	paths := map[string]string{}
	for _, src := range r.Sources {
		name := d.entry("source", src.Name)
		if other, dup := paths[src.Path]; dup {
			d.errorAt(src.Pos(), "%s: path %s is already used by source %s", name, src.Path, other)
		}
		paths[src.Path] = src.Name
		r.checkRefs(d, src.Default, name+".default")
		r.checkRefs(d, src.OtherModeTo, name+".other_mode_to")
		if len(src.OtherModeTo.Names) > 0 && src.Mode == "" {
			d.errorAt(src.OtherModeTo.At, "%s: other_mode_to needs mode: live or mode: test", name)
		}
		for i, route := range src.Routes {
			what := "route " + route.Name + ".to"
			if d.json {
				what = name + ".routes[" + strconv.Itoa(i) + "].to"
			}
			r.checkRefs(d, route.To, what)
		}
		if src.Dedup.Window > r.Storage.Retention {
			d.errorAt(src.Pos(), "%s: dedup.window %s is longer than storage.retention %s", name, src.Dedup.Window, r.Storage.Retention)
		}
	}
}

// checkJetStream refuses what the JetStream store cannot carry: upstream
// names become subject tokens, and ordered delivery needs a single queue.
func (r *Routes) checkJetStream(d *decoder) {
	if r.Storage.JetStream == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(r.Upstreams)) {
		up := r.Upstreams[name]
		if !streamName.MatchString(name) {
			d.errorAt(up.Pos(), "%s: with storage.jetstream an upstream name must be letters, digits, - or _", d.entry("upstream", name))
		}
		if up.Ordering != nil {
			d.errorAt(up.Ordering.Key.At, "%s: ordering is not available with storage.jetstream (deliveries are shared by every instance)", d.entry("upstream", name))
		}
	}
}

// checkReserved refuses the names alerts use for themselves.
func (r *Routes) checkReserved(d *decoder) {
	for _, src := range r.Sources {
		if src.Name == AlertSource {
			d.errorAt(src.Pos(), "%s: the name is reserved for the gateway's alerts", d.entry("source", src.Name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Upstreams)) {
		if strings.HasPrefix(name, AlertUpstreamPrefix) {
			d.errorAt(r.Upstreams[name].Pos(), "%s: names starting with %q are reserved for alert targets", d.entry("upstream", name), AlertUpstreamPrefix)
		}
	}
}

func (r *Routes) checkRefs(d *decoder, refs Refs, what string) {
	for _, name := range refs.Names {
		if _, ok := r.Upstreams[name]; !ok {
			d.errorAt(refs.At, "%s: unknown upstream %q%s", what, name, r.upstreamNames())
		}
	}
}
