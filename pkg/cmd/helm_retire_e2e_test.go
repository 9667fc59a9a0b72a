package cmd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestInstallRetireHelmReleasesCommand: --take-ownership and --retire-helm-releases reach
// the install and its lines reach the terminal, on a Helm release (made by the helm CLI)
// that holds one object the install renders. The migration itself, upstream's charts and
// all, is proven in operator/action (migrate_e2e_test.go).
func TestInstallRetireHelmReleasesCommand(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	t.Setenv("HOME", t.TempDir())
	helm := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(cluster.Bin(t, "helm"), append(args, "--kubeconfig", c.Kubeconfig, "--namespace", ns)...)
		home := t.TempDir()
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helm %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	chart := t.TempDir()
	for name, body := range map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: reader\nversion: 0.1.0\n",
		"templates/sa.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: istio-reader-service-account\n" +
			"  namespace: {{ .Release.Namespace }}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(chart, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(chart, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	helm("install", "reader", chart)
	t.Cleanup(func() {
		_, _, _ = harness.Run(t, "--kubeconfig", c.Kubeconfig, "-i", ns, "uninstall", "-r", "default", "-y", "--set", "namespace="+ns)
	})
	release, record := ns+"/reader", "Secret/"+ns+"/sh.helm.release.v1.reader.v1"
	listed := func() string { return helm("list", "--short") }

	out, stderr, err := harness.Run(t, installArgs(c.Kubeconfig, ns, "--take-ownership", "--retire-helm-releases", "--dry-run")...)
	if err != nil {
		t.Fatalf("dry run: %v\n%s%s", err, out, stderr)
	}
	mustContain(t, "the dry run", out, "- Helm release "+release+" would be retired: its 1 release record(s) would be deleted\n  "+record+"\n",
		"✔ Dry run complete, nothing was written")
	if l := listed(); l != "reader\n" {
		t.Errorf("after the dry run helm list shows %q, want the release", l)
	}

	out, stderr, err = harness.Run(t, installArgs(c.Kubeconfig, ns, "--take-ownership", "-y")...)
	if err != nil {
		t.Fatalf("install: %v\n%s%s", err, out, stderr)
	}
	mustContain(t, "the install without --retire-helm-releases", out,
		"! Helm release(s) "+release+" still list objects this install owns", "with --retire-helm-releases\n", "✔ Installation complete")
	if strings.Contains(out, "retired:") || listed() != "reader\n" {
		t.Errorf("without --retire-helm-releases the release was retired:\n%s", out)
	}

	out, stderr, err = harness.Run(t, installArgs(c.Kubeconfig, ns, "--take-ownership", "--retire-helm-releases", "-y")...)
	if err != nil {
		t.Fatalf("install --retire-helm-releases: %v\n%s%s", err, out, stderr)
	}
	mustContain(t, "the install with --retire-helm-releases", out, "✔ Helm release "+release+" retired: deleted its 1 release record(s)", record, "✔ Installation complete")
	if l := listed(); l != "" {
		t.Errorf("after retiring helm list shows %q", l)
	}
}
