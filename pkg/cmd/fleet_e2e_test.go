package cmd_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
)

const fleetExample = "../../docs/examples/fleet-3-clusters.yaml"

// TestFleetCommandsE2E: what the x fleet commands print, ask and exit with on the 3-cluster
// bed (what they do is operator/action/fleetrun's tests'): precheck's report in each format
// and its verdict, exit 1 with a cluster unreachable; install's prompt (each cluster's plan,
// the links) answered n writes nothing; an install stopped by a signal exits 130 saying so;
// install's table and closing line; a second install's JSON stream as recorded; verify's
// verdict, exit 1 naming a missing link; uninstall's closing line; no token printed.
func TestFleetCommandsE2E(t *testing.T) {
	bed := cluster.GetBed(t, 3)
	file := fleetWithCA(t, pki.New(t, pki.Valid))
	var outs []string
	fleet := func(kubeconfig string, args ...string) (string, int) {
		t.Helper()
		r := harness.Istioctl{T: t, Kubeconfig: kubeconfig}.Run(append([]string{"x", "fleet"}, args...)...)
		outs = append(outs, r.Stdout, r.Stderr)
		return r.Stdout + r.Stderr + r.ErrorLine(), r.Code
	}
	purge := func() {
		if out, code := fleet(bed.Kubeconfig, "uninstall", "-f", file, "-y", "--purge"); code != 0 {
			t.Errorf("fleet uninstall --purge: exit %d\n%s", code, out)
		}
	}
	purge()
	t.Cleanup(purge)
	says := func(what, out string, code, wantCode int, wants ...string) {
		t.Helper()
		if code != wantCode {
			t.Errorf("%s: exit %d, want %d\n%s", what, code, wantCode, out)
		}
		mustContain(t, what, out, wants...)
	}

	out, code := fleet(bed.Kubeconfig, "precheck", "-v", "-f", file)
	says("fleet precheck", out, code, 0, "cluster cluster-1: ", "cluster cluster-3: ", "Across clusters", "Links of the fleet",
		"Secret/istio-system/istio-remote-secret-cluster-3 in cluster cluster-2: is free", "No issues found when checking the clusters of the fleet")
	for format, want := range map[string]string{"junit": "<testsuite", "yaml": "command: fleet precheck"} {
		out, code := fleet(bed.Kubeconfig, "precheck", "-f", file, "-o", format)
		says("fleet precheck -o "+format, out, code, 0, want, "cluster cluster-3: ")
	}
	out, code = fleet(harness.UnreachableKubeconfig(t, bed.Kubeconfig, "cluster-2"), "precheck", "-f", file, "-o", "json")
	says("fleet precheck with cluster-2 unreachable", out, code, 1, `"check": "cluster-reachable"`, "cannot reach it through context cluster-2")
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &struct{ Results []any }{}); err != nil {
		t.Errorf("fleet precheck -o json: %v\n%s", err, out)
	}

	before := bedObjects(t, bed)
	answered, errOut, err := harness.Asking(t, "n\n", "--kubeconfig", bed.Kubeconfig, "x", "fleet", "install", "-f", file)
	outs = append(outs, answered, errOut)
	if err == nil {
		t.Errorf("answering n: no error\n%s", answered)
	}
	mustContain(t, "the prompt", answered, "Cluster cluster-1 (primary):", "Cluster cluster-3 (remote):", "Plan: 42 to create", "Links:",
		"+ istio-system/istio-remote-secret-cluster-3 in cluster-1, cluster-3's credentials: to create", `install fleet "bed" into 3 clusters`)
	if diff := bedObjectsDiff(before, bedObjects(t, bed)); len(diff) > 0 {
		t.Errorf("answering n changed:\n  %s", strings.Join(diff, "\n  "))
	}

	// Stopped once cluster-1's lock is held, as ctrl-c stops it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go harness.WhenLocked(bed.Clusters[0], cancel)
	r := harness.Istioctl{T: t, Kubeconfig: bed.Kubeconfig, Ctx: ctx}.Run("x", "fleet", "install", "-f", file, "-y")
	outs = append(outs, r.Stdout, r.Stderr)
	says("interrupted fleet install", r.Stdout, r.Code, 130, "Fleet install interrupted")

	out, code = fleet(bed.Kubeconfig, "install", "-f", file, "-y")
	says("fleet install", out, code, 0, "[cluster-1] ", "[cluster-3] ", "CLUSTER", "Fleet install complete (3 clusters, 4 links)")
	mustRows(t, "fleet install", out, "cluster-3 remote installed", "istio-system/istio-remote-secret-cluster-3 cluster-2 cluster-3 created")
	// As recorded (testdata/events; -update re-records), byte for byte once what varies run
	// to run is masked.
	out, code = fleet(bed.Kubeconfig, "install", "-f", file, "-y", "-o", "json")
	says("fleet install again", out, code, 0)
	want := recording(t, "fleet-install-unchanged", out)
	if w, got := streamForm(t, string(want)), streamForm(t, out); strings.Join(got, "\n") != strings.Join(w, "\n") {
		t.Errorf("the stream differs from its recording:\n%s", firstDifference(w, got))
	}

	out, code = fleet(bed.Kubeconfig, "verify", "-f", file)
	says("fleet verify", out, code, 0, "cluster cluster-1: Link to cluster-3", "Every cluster of the fleet is installed, verified and linked")
	if err := bed.Clusters[0].Kube.CoreV1().Secrets("istio-system").Delete(context.Background(), "istio-remote-secret-cluster-3", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	out, code = fleet(bed.Kubeconfig, "verify", "-f", file)
	says("fleet verify with a link missing", out, code, 1, "Secret/istio-system/istio-remote-secret-cluster-3 in cluster cluster-1: is missing")
	tokens := bedTokens(t, bed)
	out, code = fleet(bed.Kubeconfig, "uninstall", "-f", file, "-y")
	says("fleet uninstall", out, code, 0, "Fleet uninstall complete")
	for i, out := range outs {
		for _, tok := range tokens {
			if strings.Contains(out, tok) {
				t.Errorf("output %d holds a token", i)
			}
		}
	}
}

// fleetWithCA is the example fleet file with one shared cacerts set (spec.trust) made of
// ca, in a directory of its own.
func fleetWithCA(t *testing.T, ca *pki.CA) string {
	t.Helper()
	b, err := os.ReadFile(fleetExample)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	f["spec"].(map[string]any)["trust"] = map[string]any{"cacerts": map[string]any{"dir": "."}}
	dir := t.TempDir()
	files := ca.SecretData()
	if files["fleet.yaml"], err = yaml.Marshal(f); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "fleet.yaml")
}

// bedObjects are harness.ObjectVersions of every bed cluster, keyed by context.
func bedObjects(t *testing.T, bed *cluster.Bed) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, c := range bed.Clusters {
		out[c.Context] = harness.ObjectVersions(t, c)
	}
	return out
}

// bedObjectsDiff is harness.VersionsDiff per cluster, each line prefixed with its context.
func bedObjectsDiff(before, after map[string]map[string]string) []string {
	var out []string
	for ctx, b := range before {
		for _, d := range harness.VersionsDiff(b, after[ctx]) {
			out = append(out, ctx+": "+d)
		}
	}
	return out
}

// bedTokens are the ServiceAccount tokens the bed's istio namespaces hold.
func bedTokens(t *testing.T, bed *cluster.Bed) []string {
	t.Helper()
	var out []string
	for _, c := range bed.Clusters {
		out = append(out, harness.ServiceAccountTokens(t, c)...)
	}
	if len(out) == 0 {
		t.Error("no token in the bed: nothing to look for")
	}
	return out
}

// mustRows fails unless out has, for each row, a line whose fields begin with the row's
// (a table row whatever its column widths; its time column aside).
func mustRows(t *testing.T, what, out string, rows ...string) {
	t.Helper()
	for _, r := range rows {
		want := strings.Fields(r)
		if !slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool {
			f := strings.Fields(l)
			return len(f) >= len(want) && slices.Equal(f[:len(want)], want)
		}) {
			t.Errorf("%s has no row %q:\n%s", what, r, out)
		}
	}
}
