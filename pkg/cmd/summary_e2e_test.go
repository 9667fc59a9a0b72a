package cmd_test

import (
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestSummaryE2E: before every prompt, install, upgrade and uninstall say what they will
// do, per component and in total, with the fields each update changes; answering no writes
// nothing. A re-install with nothing to change says so and does not ask. With -y the counts
// come first, with no request the install would not make anyway: no server-side dry run,
// and every metadata list once. The summaries are golden files.
func TestSummaryE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Chdir("../..")
	t.Setenv("HOME", t.TempDir())
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()
	istioctl("uninstall", "--purge", "-y")
	kubeconfig, log := harness.RecordingProxy(t, c)

	// Into a namespace that does not exist yet: everything is to create, and no server-side
	// dry run is sent to find that out (it could not check objects in a missing namespace).
	log.Take()
	// (The plan's admission check sends dry runs of its own, left out here:
	// TestAdmissionInstallPlanE2E.)
	out, _, err := harness.Asking(t, "n\n", "--kubeconfig", kubeconfig, "install", "--set", "profile=minimal", "--skip-admission-check",
		"--set", "namespace=summary-new", "--set", "values.global.istioNamespace=summary-new")
	if want := "Plan: 36 to create, 0 to update, 0 unchanged, 0 to prune\n"; !strings.HasPrefix(out, want) || !strings.Contains(out, "Cancelled.") || exitCode(err) != 1 {
		t.Errorf("install into a new namespace, answered n: %v\n%s\nwant it to start with %q", err, out, want)
	}
	if dry := harness.DryRuns(log.Take()); len(dry) > 0 {
		t.Errorf("the summary of an install into a new namespace sent server-side dry runs: %v", dry)
	}

	istioctl("install", "-y")
	// default → demo, answered n: the summary names the fields each update changes; nothing
	// is written.
	harness.Settled(t, c)
	before, writes := harness.ObjectVersions(t, c), harness.AuditWrites(t, c)
	out, _, err = harness.Asking(t, "n\n", "--kubeconfig", c.Kubeconfig, "install", "--set", "profile=demo")
	golden.Check(t, "testdata/install/summary-default-to-demo.txt", []byte(out))
	if exitCode(err) != 1 || !strings.Contains(out, "~ ConfigMap/istio-system/istio: data.mesh") || !strings.Contains(out, "Proceed? (y/N) Cancelled.") {
		t.Errorf("default → demo, answered n: %v\n%s", err, out)
	}
	if w := harness.WritesBetween(writes, harness.AuditWrites(t, c)); len(w) > 0 {
		t.Errorf("answering n sent write requests: %v", w)
	}
	if diffs := harness.VersionsDiff(before, harness.ObjectVersions(t, c)); len(diffs) > 0 {
		t.Errorf("answering n changed the cluster:\n  %s", strings.Join(diffs, "\n  "))
	}

	// With -y: the counts are the first lines, from the reads the install makes anyway.
	log.Take()
	out = harness.Istioctl{T: t, Kubeconfig: kubeconfig}.MustRun("install", "-y", "--set", "profile=demo", "--skip-admission-check")
	reqs := log.Take()
	if want := "Plan: 5 to create, 6 to update, 34 unchanged, 2 to prune\n"; !strings.HasPrefix(out, want) {
		t.Errorf("install -y should start with the counts %q:\n%s", want, out)
	}
	if dry := harness.DryRuns(reqs); len(dry) > 0 {
		t.Errorf("install -y sent server-side dry runs for its summary: %v", dry)
	}
	if twice := harness.RepeatedMetadataLists(reqs); len(twice) > 0 {
		t.Errorf("install -y listed the same metadata more than once: %v", twice)
	}

	// The same again: nothing to change, no question, exit 0, nothing written.
	harness.Settled(t, c)
	before, writes = harness.ObjectVersions(t, c), harness.AuditWrites(t, c)
	out, _, err = harness.Asking(t, "", "--kubeconfig", c.Kubeconfig, "install", "--set", "profile=demo")
	golden.Check(t, "testdata/install/summary-reinstall.txt", []byte(out))
	if err != nil || strings.Contains(out, "Proceed?") || !strings.Contains(out, "Nothing to change") {
		t.Errorf("re-install: %v\n%s", err, out)
	}
	if w := harness.WritesBetween(writes, harness.AuditWrites(t, c)); len(w) > 0 {
		t.Errorf("a re-install with nothing to change sent write requests: %v", w)
	}
	if diffs := harness.VersionsDiff(before, harness.ObjectVersions(t, c)); len(diffs) > 0 {
		t.Errorf("a re-install with nothing to change changed the cluster:\n  %s", strings.Join(diffs, "\n  "))
	}

	// demo → minimal prunes both gateways; the summary lists what goes.
	out, _, err = harness.Asking(t, "n\n", "--kubeconfig", c.Kubeconfig, "install", "--set", "profile=minimal")
	golden.Check(t, "testdata/install/summary-demo-to-minimal.txt", []byte(out))
	if exitCode(err) != 1 || !strings.Contains(out, "- Deployment/istio-system/istio-egressgateway") {
		t.Errorf("demo → minimal, answered n: %v\n%s", err, out)
	}

	// uninstall lists what it removes, per component, the tags and records included.
	out, _, err = harness.Asking(t, "n\n", "--kubeconfig", c.Kubeconfig, "uninstall", "-r", "default")
	golden.Check(t, "testdata/uninstall/summary.txt", []byte(out))
	if exitCode(err) != 1 || !strings.Contains(out, "Revision tags") || !strings.Contains(out, "Install records") {
		t.Errorf("uninstall, answered n: %v\n%s", err, out)
	}
	if diffs := harness.VersionsDiff(before, harness.ObjectVersions(t, c)); len(diffs) > 0 {
		t.Errorf("answering n changed the cluster:\n  %s", strings.Join(diffs, "\n  "))
	}

	// Without a terminal a prompt is still a usage error, and nothing is read for a summary.
	log.Take()
	if _, _, err := harness.Run(t, "--kubeconfig", kubeconfig, "install", "--set", "profile=minimal", "--skip-admission-check"); !isUsage(err) {
		t.Errorf("install without -y and without a terminal: %v, want a usage error", err)
	}
	if dry := harness.DryRuns(log.Take()); len(dry) > 0 {
		t.Errorf("an install that cannot ask sent dry runs: %v", dry)
	}
}
