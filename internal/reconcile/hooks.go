package reconcile

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Shapes of what a source's reconcile.hook names, per provider.
var (
	githubHook        = regexp.MustCompile(`^(repos/[A-Za-z0-9._-]+/[A-Za-z0-9._-]+|orgs/[A-Za-z0-9._-]+)/hooks/[0-9]+$`)
	gitlabHook        = regexp.MustCompile(`^(projects|groups)/[A-Za-z0-9._%-]+/hooks/[0-9]+$`)
	paddleDestination = regexp.MustCompile(`^ntfset_[a-z0-9]{26}$`)
	paypalWebhook     = regexp.MustCompile(`^[A-Z0-9]{8,64}$`)
)

// CheckSettings says what is wrong with a provider's reconcile hook and
// credentials, as the configuration names them; nil when nothing is.
// Empty credentials are not checked (a check that cannot resolve them).
func CheckSettings(provider, hook, credentials string) error {
	switch provider {
	case "github":
		if !githubHook.MatchString(hook) {
			return fmt.Errorf("hook must be repos/OWNER/REPO/hooks/ID or orgs/ORG/hooks/ID, got %q", hook)
		}
	case "gitlab":
		if !gitlabHook.MatchString(hook) {
			return fmt.Errorf("hook must be projects/ID/hooks/ID or groups/ID/hooks/ID, got %q", hook)
		}
	case "paddle":
		if !paddleDestination.MatchString(hook) {
			return fmt.Errorf("hook must be the notification destination's id (ntfset_ and 26 letters or digits), got %q", hook)
		}
	case "paypal":
		if id, secret, ok := strings.Cut(credentials, ":"); credentials != "" && (!ok || id == "" || secret == "") {
			return errors.New("paypal credentials are CLIENT_ID:SECRET of a REST app")
		}
		if hook != "" && !paypalWebhook.MatchString(hook) {
			return fmt.Errorf("hook must be a PayPal webhook id (capital letters and digits), got %q", hook)
		}
	default:
		if hook != "" {
			return errors.New("hook is for github, gitlab, paddle and paypal only")
		}
	}
	return nil
}
