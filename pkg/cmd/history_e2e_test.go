package cmd_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

// historyOf returns the records `istioctl history -o json` lists.
func historyOf(t *testing.T, kubeconfig string, args ...string) []history.Record {
	t.Helper()
	out, stderr, err := harness.Run(t, append([]string{"--kubeconfig", kubeconfig, "history", "-o", "json"}, args...)...)
	if err != nil {
		t.Fatalf("history: %v\n%s\n%s", err, out, stderr)
	}
	var rs []history.Record
	if err := jsonUnmarshal(out, &rs); err != nil {
		t.Fatalf("history -o json: %v\n%s", err, out)
	}
	return rs
}

type recordSummary struct {
	Number     int
	Action     string
	Outcome    history.Outcome
	Profile    string
	RollbackOf int
}

func summaries(rs []history.Record) []recordSummary {
	var out []recordSummary
	for _, r := range rs {
		out = append(out, recordSummary{r.Number, r.Action, r.Outcome, r.Profile, r.RollbackOf})
	}
	return out
}

func sameSummaries(a, b []recordSummary) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestHistoryRollbackE2E: default, then demo, then rollback. The cluster is back at the
// default profile (the egress gateway pruned), verify-install passes and the history shows
// the three records.
func TestHistoryRollbackE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	ist := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	ist("uninstall", "--purge", "-y") // also removes earlier tests' records
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()
	if rs := historyOf(t, c.Kubeconfig); len(rs) != 0 {
		t.Fatalf("records survived uninstall --purge: %+v", summaries(rs))
	}
	egressExists := func() bool {
		_, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istio-egressgateway", metav1.GetOptions{})
		return err == nil
	}

	start := time.Now()
	ist("install", "-y")
	ist("install", "-y", "--set", "profile=demo")
	if !egressExists() {
		t.Fatal("demo installed no egress gateway")
	}

	// Not without -y off a terminal; not to a record that does not exist; a dry run changes nothing.
	if _, _, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "rollback"); !isUsage(err) {
		t.Errorf("rollback without -y: want a usage error, got %v", err)
	}
	if _, _, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "rollback", "9", "-y"); err == nil || !strings.Contains(err.Error(), "no install record 9 of revision default (it has 1, 2)") {
		t.Errorf("rollback 9: %v", err)
	}
	if _, _, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "rollback", "x"); !isUsage(err) {
		t.Errorf("rollback x: want a usage error, got %v", err)
	}
	if out := ist("rollback", "--dry-run"); !strings.Contains(out, "Deployment/istio-system/istio-egressgateway would be pruned") {
		t.Errorf("rollback --dry-run:\n%s", out)
	}
	if !egressExists() || len(historyOf(t, c.Kubeconfig)) != 2 {
		t.Fatal("the dry run changed the cluster or the history")
	}

	out := ist("rollback", "-y", "-v") // -v: a line per pruned object
	elapsed := time.Since(start)
	for _, want := range []string{"Deployment/istio-system/istio-egressgateway removed", "✔ Rollback to record 1: "} {
		if !strings.Contains(out, want) {
			t.Errorf("rollback output lacks %q:\n%s", want, out)
		}
	}
	if egressExists() {
		t.Error("the egress gateway survived the rollback to the default profile")
	}
	for _, kind := range []string{"services", "serviceaccounts"} {
		list, err := c.Dynamic.Resource(fixture.CoreGVR(map[string]string{"services": "Service", "serviceaccounts": "ServiceAccount"}[kind])).
			Namespace("istio-system").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range list.Items {
			if strings.Contains(it.GetName(), "egressgateway") {
				t.Errorf("%s %s survived the rollback", kind, it.GetName())
			}
		}
	}
	if out := ist("verify-install", "--set", "profile=default"); !strings.Contains(out, "Istio is installed and verified successfully") {
		t.Errorf("verify-install:\n%s", out)
	}
	ist("verify-install") // from the labels: nothing left over from demo

	want := []recordSummary{
		{1, history.ActionInstall, history.Succeeded, "default", 0},
		{2, history.ActionInstall, history.Succeeded, "demo", 0},
		{3, history.ActionRollback, history.Succeeded, "default", 1},
	}
	rs := historyOf(t, c.Kubeconfig)
	if got := summaries(rs); !sameSummaries(got, want) {
		t.Errorf("history:\n got %+v\nwant %+v", got, want)
	}
	for _, r := range rs {
		if r.ToolVersion == "" || r.Time.IsZero() || !strings.Contains(r.Spec, "profile: "+r.Profile) || len(r.Objects) < 30 || r.Revision != "default" {
			t.Errorf("record %d incomplete: %+v", r.Number, r)
		}
	}
	table := ist("history")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "REVISION  RECORD  UPDATED") || !strings.Contains(lines[3], "rollback to 1 complete") {
		t.Errorf("history table:\n%s", table)
	}
	// kubectl's formats (pkg/printer/list.go); -o name names the records' Secrets.
	for name, format := range map[string]string{
		"name":           "name",
		"jsonpath":       `jsonpath={range .items[*]}{.revision}/{.number} {.action} {.outcome} {.profile}{"\n"}{end}`,
		"custom-columns": "custom-columns=RECORD:.number,ACTION:.action,STATUS:.outcome,PROFILE:.profile,OF:.rollbackOf",
	} {
		golden.Check(t, "../../testdata/history/"+name+".txt", []byte(ist("history", "-o", format)))
	}
	for _, name := range strings.Fields(ist("history", "-o", "name")) {
		if _, err := c.Kube.CoreV1().Secrets("istio-system").Get(ctx, strings.TrimPrefix(name, "secret/"), metav1.GetOptions{}); err != nil {
			t.Errorf("history -o name: %s: %v", name, err)
		}
	}
	if _, _, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "history", "-o", "jsonpath="); !isUsage(err) {
		t.Errorf("history -o jsonpath=: want a usage error, got %v", err)
	}
	if rs := historyOf(t, c.Kubeconfig, "-r", "canary"); len(rs) != 0 {
		t.Errorf("history -r canary: %+v", summaries(rs))
	}
	t.Logf("default → demo → rollback: %v", elapsed.Round(100*time.Millisecond))

	// Uninstalling the revision takes its records with it.
	ist("uninstall", "-r", "default", "-y")
	if rs := historyOf(t, c.Kubeconfig); len(rs) != 0 {
		t.Errorf("records survived the uninstall: %+v", summaries(rs))
	}
}

// TestInstallAtomicE2E: an install --atomic whose Istiod cannot be scheduled fails, and the
// previous install is restored and verified; the report says what failed and what was
// restored. Without a previous install, --atomic removes the revision again.
func TestInstallAtomicE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	ist := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	ist("uninstall", "--purge", "-y")
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()
	broken := []string{"--kubeconfig", c.Kubeconfig, "install", "-y", "--atomic", "--readiness-timeout", "6s",
		"--set", "components.pilot.k8s.nodeSelector.no-such-node=x"}

	ist("install", "-y")
	start := time.Now()
	out, _, err := harness.Run(t, broken...)
	elapsed := time.Since(start)
	if err == nil || exitCode(err) == 0 {
		t.Fatalf("a failed --atomic install succeeded:\n%s", out)
	}
	for _, want := range []string{"install failed, and --atomic restored revision default to record 1 (profile default)",
		"Istiod: not ready within the readiness timeout (6s)", "unschedulable"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	for _, want := range []string{"✘ Istiod failed: not ready within the readiness timeout (6s)", "✘ Installation failed",
		"! install failed; --atomic: restoring revision default to record 1 (profile default", "✔ Rollback to record 1: "} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	d, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Spec.Template.Spec.NodeSelector) != 0 || d.Status.ReadyReplicas < 1 || d.Status.UpdatedReplicas != d.Status.Replicas {
		t.Errorf("istiod not restored: nodeSelector %v, status %+v", d.Spec.Template.Spec.NodeSelector, d.Status)
	}
	if out := ist("verify-install", "--set", "profile=default"); !strings.Contains(out, "Istio is installed and verified successfully") {
		t.Errorf("verify-install:\n%s", out)
	}
	want := []recordSummary{
		{1, history.ActionInstall, history.Succeeded, "default", 0},
		{2, history.ActionInstall, history.RolledBack, "default", 0},
		{3, history.ActionRollback, history.Succeeded, "default", 1},
	}
	rs := historyOf(t, c.Kubeconfig)
	if got := summaries(rs); !sameSummaries(got, want) {
		t.Errorf("history:\n got %+v\nwant %+v", got, want)
	}
	if len(rs) == 3 && (!strings.HasPrefix(rs[1].Description, "rolled back to 1 after: Istiod: not ready") ||
		!strings.Contains(rs[2].Description, "(--atomic, after 2 failed)")) {
		t.Errorf("descriptions: %q, %q", rs[1].Description, rs[2].Description)
	}
	t.Logf("failed --atomic install and its rollback: %v", elapsed.Round(100*time.Millisecond))

	// Installed without records (as by an istioctl without install history): nothing to
	// restore, and nothing removed either.
	if err := c.Kube.CoreV1().Secrets("istio-system").DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: history.Selector("")}); err != nil {
		t.Fatal(err)
	}
	out, _, err = harness.Run(t, broken...)
	if err == nil || !strings.Contains(err.Error(), "--atomic had no install record of revision default to restore") ||
		!strings.Contains(out, "the failed install is left as it is") {
		t.Errorf("--atomic over an unrecorded install: %v\n%s", err, out)
	}
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod", metav1.GetOptions{}); err != nil {
		t.Errorf("--atomic removed an install it had no record of: %v", err)
	}

	// No earlier install: the revision's components go again (Base stays, as with uninstall).
	ist("uninstall", "-r", "default", "-y")
	start = time.Now()
	out, _, err = harness.Run(t, append(broken, "-o", "json")...)
	if err == nil || !strings.Contains(err.Error(), "--atomic removed revision default again") {
		t.Fatalf("--atomic without a previous install: %v\n%s", err, out)
	}
	if !strings.Contains(out, `"type":"warning"`) || !strings.Contains(out, `"status":"uninstall"`) {
		t.Errorf("JSON report:\n%s", out)
	}
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod", metav1.GetOptions{}); err == nil {
		t.Error("istiod survived the --atomic removal")
	}
	rs = historyOf(t, c.Kubeconfig)
	if len(rs) != 1 || rs[0].Outcome != history.Removed {
		t.Errorf("history: %+v", summaries(rs))
	}
	t.Logf("failed --atomic install without a previous one, and its removal: %v", time.Since(start).Round(100*time.Millisecond))
}

// TestHistoryHoldsNoSecretData installs charts that render a Secret and checks the install
// record lists the Secret by identity and holds none of its data.
func TestHistoryHoldsNoSecretData(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "charts"), os.DirFS("../../manifests/charts")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "profiles"), os.DirFS("../../profiles")); err != nil {
		t.Fatal(err)
	}
	const plain, stringData = "TOP-SECRET-KEY-MATERIAL", "plain-string-data-token"
	encoded := base64.StdEncoding.EncodeToString([]byte(plain))
	secret := `apiVersion: v1
kind: Secret
metadata: {name: test-credentials, namespace: {{ .Release.Namespace }}}
type: Opaque
data: {key.pem: ` + encoded + `}
stringData: {token: ` + stringData + `}
`
	if err := os.WriteFile(filepath.Join(dir, "charts/base/templates/zz-test-secret.yaml"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := harness.Run(t, installArgs(c.Kubeconfig, ns, "-y", "--manifests", dir, "--set", "components.cni.enabled=false")...)
	if err != nil {
		t.Fatalf("install: %v\n%s\n%s", err, out, stderr)
	}
	if _, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, "test-credentials", metav1.GetOptions{}); err != nil {
		t.Fatalf("the chart's Secret was not installed: %v", err)
	}
	rec, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, "istioctl-install-default-v1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(rec.Data[history.DataKey]))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{plain, encoded, stringData, "key.pem"} {
		if strings.Contains(string(payload), leak) {
			t.Errorf("the install record holds %q", leak)
		}
	}
	if !strings.Contains(string(payload), `{"version":"v1","kind":"Secret","namespace":"`+ns+`","name":"test-credentials"}`) {
		t.Errorf("the record does not list the Secret's identity:\n%s", payload)
	}
}
