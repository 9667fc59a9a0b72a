package cmd_test

import (
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// The flags of upgrade --strategy revision are refused, as a bad command line (exit 64),
// where they mean nothing; what the strategy does is operator/action's
// TestRevisionUpgradeE2E.
func TestUpgradeStrategyFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--prune-old"}, "--prune-old needs --strategy revision"},
		{[]string{"--strategy", "in-place", "--to-revision", "b"}, "--to-revision needs --strategy revision"},
		{[]string{"--strategy", "revision", "-r", "b"}, "name the new revision with --to-revision"},
		{[]string{"--strategy", "canary"}, `--strategy "canary": one of in-place, revision`},
	} {
		r := harness.Istioctl{T: t}.Run(append([]string{"upgrade", "-y"}, tc.args...)...)
		if r.Code != 64 || r.Err == nil || !strings.Contains(r.Err.Error(), tc.want) {
			t.Errorf("upgrade %v: exit %d, %v; want 64 and %q", tc.args, r.Code, r.Err, tc.want)
		}
	}
}
