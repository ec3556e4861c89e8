// Package hookgate registers the Hookgate Caddy modules and the hookgate
// command. Import it for its side effects, as xcaddy does with
// `--with github.com/hookgate/hookgate`.
package hookgate

import (
	_ "github.com/hookgate/hookgate/caddymodule"
	_ "github.com/hookgate/hookgate/hookgatecmd"
)
