package cmd_test

import (
	"os"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// fleetKubeconfig has the contexts make cluster-up CLUSTERS=3 writes; fleet dump reads it
// and contacts no cluster.
const fleetKubeconfig = "../../testdata/fleet/kubeconfig.yaml"

// TestFleetDump: the dump of the documented example (read from stdin: -f -) and of each
// model, as golden files.
func TestFleetDump(t *testing.T) {
	example, _ := os.ReadFile("../../docs/examples/fleet-3-clusters.yaml")
	for _, tc := range []struct{ name, file, output string }{
		{"fleet-3-clusters", "-", "yaml"},
		{"two-primaries", "../../operator/fleet/testdata/two-primaries.yaml", "yaml"},
		{"external", "../../operator/fleet/testdata/external.yaml", "yaml"},
		{"two-primaries-json", "../../operator/fleet/testdata/two-primaries.yaml", "json"},
		{"two-networks", "../../operator/fleet/testdata/two-networks.yaml", "yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := harness.Istioctl{T: t, Stdin: string(example)}.Run("--kubeconfig", fleetKubeconfig, "x", "fleet", "dump", "-f", tc.file, "-o", tc.output)
			if r.Err != nil || r.Stderr != "" {
				t.Fatalf("fleet dump: %v\n%s", r.Err, r.Stderr)
			}
			for _, secret := range []string{"not a real", "token:", "BEGIN"} {
				if strings.Contains(r.Stdout, secret) {
					t.Errorf("the dump holds %q", secret)
				}
			}
			golden.Check(t, "../../testdata/fleet/dump-"+tc.name+"."+tc.output, []byte(r.Stdout))
		})
	}
}

// TestFleetBadInput: a fleet file that does not decode, and one whose cluster's spec does
// not resolve, fail with the file's line (and the cluster), before any cluster is asked.
func TestFleetBadInput(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"cycle", "../../operator/fleet/testdata/bad/cycle.yaml", "cycle.yaml:16: spec.clusters[1].primary: cycle: cluster-2 → cluster-3 → cluster-2"},
		{"resolve", "../../testdata/fleet/bad-resolve.yaml", `cluster cluster-2: ../../testdata/fleet/bad-resolve.yaml:19: spec.revision: "Not_A_Revision" is not a valid revision`},
	} {
		for _, command := range []string{"dump", "precheck", "verify"} {
			t.Run(tc.name+"/"+command, func(t *testing.T) {
				out, _, err := harness.Run(t, "--kubeconfig", fleetKubeconfig, "x", "fleet", command, "-f", tc.file)
				if err == nil || !strings.Contains(err.Error(), tc.want) || harness.ExitCode(err) != 1 || out != "" {
					t.Errorf("fleet %s: exit %d, %v, want %q\n%s", command, harness.ExitCode(err), err, tc.want, out)
				}
			})
		}
	}
	if _, _, err := harness.Run(t, "--kubeconfig", fleetKubeconfig, "--context", "cluster-1", "x", "fleet", "precheck", "-f", "../../docs/examples/fleet-3-clusters.yaml"); harness.ExitCode(err) != 64 {
		t.Errorf("--context with a fleet: %v (exit %d), want a usage error", err, harness.ExitCode(err))
	}
}

// TestFleetDumpOffline: fleet dump touches no cluster, so a pipeline renders a fleet where
// no credentials exist: without a kubeconfig (or without a context it names) each context
// it cannot check is a warning naming its line; precheck still refuses.
func TestFleetDumpOffline(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	const file = "../../docs/examples/fleet-3-clusters.yaml"
	out, errOut, err := harness.Run(t, "x", "fleet", "dump", "-f", file)
	if err != nil {
		t.Fatalf("fleet dump without a kubeconfig: %v\n%s", err, errOut)
	}
	for _, cluster := range []string{"cluster-1", "cluster-2", "cluster-3"} {
		if !strings.Contains(errOut, `context "`+cluster+`" is not in the kubeconfig (it has none): not checked`) {
			t.Errorf("no warning for %s's context:\n%s", cluster, errOut)
		}
	}
	want, err := os.ReadFile("../../testdata/fleet/dump-fleet-3-clusters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("the offline dump differs from the dump with the contexts:\n%s", out)
	}
	if _, _, err := harness.Run(t, "x", "fleet", "precheck", "-f", file); err == nil || !strings.Contains(err.Error(), "is not in the kubeconfig") {
		t.Errorf("fleet precheck without the contexts: %v, want the missing contexts as errors", err)
	}
}
