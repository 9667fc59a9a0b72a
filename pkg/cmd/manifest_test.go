package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestManifestTranslateCommand: the command's flags reach the translation and it writes
// upstream's layout into -o (created if missing), executable scripts included, then says
// where; without -o it writes into a new temporary directory. The migrations themselves
// are proven in operator/action (migrate_e2e_test.go).
func TestManifestTranslateCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "out")
	out, stderr, err := harness.Run(t, "manifest", "translate", "-s", "profile=minimal", "-r", "canary", "-o", dir)
	if err != nil {
		t.Fatalf("manifest translate: %v\n%s", err, stderr)
	}
	if want := "Output written to " + dir + "! See the README.md for next steps\n"; out != want {
		t.Errorf("output %q, want %q", out, want)
	}
	for _, f := range []string{"README.md", "base-values.yaml", "install-base.sh", "pilot-canary-values.yaml", "install-pilot-canary.sh",
		"charts/istio-control/istio-discovery/Chart.yaml"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if strings.HasSuffix(f, ".sh") && st.Mode().Perm() != 0o755 {
			t.Errorf("%s has mode %v, want 0755", f, st.Mode().Perm())
		}
	}

	t.Setenv("TMPDIR", t.TempDir())
	out, _, err = harness.Run(t, "manifest", "translate")
	if err != nil || !strings.HasPrefix(out, "Output written to "+filepath.Join(os.Getenv("TMPDIR"), "istioctl-migrate-")) {
		t.Errorf("without -o: %v %q", err, out)
	}

	// manifest install is install, flags and all.
	out, _, err = harness.Run(t, "manifest", "install", "--help")
	if err != nil || !strings.Contains(out, "--take-ownership") || !strings.Contains(out, "--retire-helm-releases") {
		t.Errorf("manifest install --help: %v\n%s", err, out)
	}
}
