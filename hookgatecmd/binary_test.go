package hookgatecmd

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hookgate/hookgate/caddymodule"
)

// TestOwnFlags: reload --envfile sets the file's variables (keeping one
// already set) and is taken out of Caddy's arguments; validate
// --no-secrets turns the check without secrets on; other commands keep
// their arguments.
func TestOwnFlags(t *testing.T) {
	env := filepath.Join(t.TempDir(), "hookgate.env")
	os.WriteFile(env, []byte("# the unit's environment\nHOOKGATE_T_DOMAIN=hooks.example.com\nexport HOOKGATE_T_QUOTED=\"a b\"\nHOOKGATE_T_SET=from-file\n"), 0o600)
	t.Setenv("HOOKGATE_T_SET", "already")
	os.Unsetenv("HOOKGATE_T_DOMAIN")
	os.Unsetenv("HOOKGATE_T_QUOTED")
	t.Cleanup(func() { os.Unsetenv("HOOKGATE_T_DOMAIN"); os.Unsetenv("HOOKGATE_T_QUOTED") })
	args, err := ownFlags([]string{"hookgate", "reload", "--config", "Caddyfile", "--envfile", env, "--force"})
	if err != nil || !slices.Equal(args, []string{"hookgate", "reload", "--config", "Caddyfile", "--force"}) {
		t.Fatalf("reload args %v %v", args, err)
	}
	if os.Getenv("HOOKGATE_T_DOMAIN") != "hooks.example.com" || os.Getenv("HOOKGATE_T_QUOTED") != "a b" || os.Getenv("HOOKGATE_T_SET") != "already" {
		t.Fatalf("environment after --envfile: %q %q %q", os.Getenv("HOOKGATE_T_DOMAIN"), os.Getenv("HOOKGATE_T_QUOTED"), os.Getenv("HOOKGATE_T_SET"))
	}
	os.WriteFile(env, []byte("NOT A LINE\n"), 0o600)
	if _, err := ownFlags([]string{"hookgate", "reload", "--envfile=" + env}); err == nil {
		t.Fatal("a malformed env file was taken")
	}
	if _, err := ownFlags([]string{"hookgate", "reload", "--envfile"}); err == nil {
		t.Fatal("--envfile without a file was taken")
	}
	t.Cleanup(func() { caddymodule.ValidateWithoutSecrets = false })
	args, err = ownFlags([]string{"hookgate", "validate", "--no-secrets", "--config", "Caddyfile"})
	if err != nil || !caddymodule.ValidateWithoutSecrets || !slices.Equal(args, []string{"hookgate", "validate", "--config", "Caddyfile"}) {
		t.Fatalf("validate args %v %v", args, err)
	}
	if args, _ := ownFlags([]string{"hookgate", "run", "--envfile", env}); len(args) != 4 {
		t.Fatalf("run's own --envfile was taken: %v", args)
	}
}
