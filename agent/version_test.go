package agent

import (
	"regexp"
	"testing"
)

// TestVersion: Version is a semantic version with a v, as go tags are
// named, and says it is a pre-release until the first tag.
func TestVersion(t *testing.T) {
	semver := regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)
	if !semver.MatchString(Version) {
		t.Fatalf("Version %q is not a semantic version", Version)
	}
	if m := semver.FindStringSubmatch(Version); m[4] == "" {
		t.Errorf("Version %q has no pre-release suffix, but no version is tagged yet", Version)
	}
}
