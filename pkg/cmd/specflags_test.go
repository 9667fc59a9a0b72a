package cmd_test

import (
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestForceFlag: --force, which every command resolving a spec shares with install,
// reaches the spec: its error becomes a warning on standard error and the command goes on.
// What Force lets an install past is proven in operator/action (TestExternalCACertsE2E).
func TestForceFlag(t *testing.T) {
	args := []string{"manifest", "generate", "--set", "values.pilot.autoscaleMinimum=2"}
	if _, _, err := harness.Run(t, args...); err == nil || harness.ExitCode(err) == 0 {
		t.Fatalf("without --force: %v", err)
	}
	out, stderr, err := harness.Run(t, append(args, "--force")...)
	if err != nil || !strings.Contains(stderr, "values.pilot.autoscaleMinimum") || !strings.Contains(stderr, "(ignored because of --force)") || !strings.Contains(out, "kind: Deployment") {
		t.Errorf("with --force: %v\n%s", err, stderr)
	}
}
