package cmd_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/pkg/cmd"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// installArgs installs Base and CNI (charts that need no running control plane) into ns.
func installArgs(kubeconfig, ns string, extra ...string) []string {
	return append([]string{"--kubeconfig", kubeconfig, "install", "--set", "profile=minimal",
		"--set", "components.pilot.enabled=false", "--set", "components.cni.enabled=true",
		"--set", "namespace=" + ns, "--set", "values.global.istioNamespace=" + ns}, extra...)
}

func TestInstallCommand(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	t.Setenv("HOME", t.TempDir())

	// Without -y and without a terminal: a usage error, nothing applied.
	_, _, err := harness.Run(t, installArgs(c.Kubeconfig, ns)...)
	var usage *cmd.UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "pass -y") {
		t.Fatalf("no -y: %v", err)
	}

	// A dry run writes nothing.
	out, _, err := harness.Run(t, installArgs(c.Kubeconfig, ns, "--dry-run")...)
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if _, err := c.Kube.AppsV1().DaemonSets(ns).Get(t.Context(), "istio-cni-node", metav1.GetOptions{}); err == nil {
		t.Fatal("dry run created the CNI DaemonSet")
	}

	// JSON progress: one event per line, ending with done.
	out, _, err = harness.Run(t, installArgs(c.Kubeconfig, ns, "-y", "-o", "json")...)
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	var events []event.Event
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var e event.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("not a JSON event: %q: %v", sc.Text(), err)
		}
		events = append(events, e)
	}
	if len(events) == 0 || events[len(events)-1].Type != event.Done || events[len(events)-1].Error != "" {
		t.Fatalf("last event: %+v", events)
	}
	ready := map[string]bool{}
	for _, e := range events {
		if e.Type == event.ComponentReady {
			ready[e.Component] = true
		}
		if e.Time.IsZero() {
			t.Errorf("event without time: %+v", e)
		}
	}
	if !ready["Base"] || !ready["Cni"] {
		t.Errorf("components ready: %v", ready)
	}
	if _, err := c.Kube.AppsV1().DaemonSets(ns).Get(t.Context(), "istio-cni-node", metav1.GetOptions{}); err != nil {
		t.Errorf("CNI DaemonSet: %v", err)
	}

	// Again: nothing to change. Text output says so.
	out, _, err = harness.Run(t, installArgs(c.Kubeconfig, ns, "-y")...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "✔ Installation complete (0 applied,") {
		t.Errorf("re-install output:\n%s", out)
	}

	// A dry run of a change shows the changed fields as a diff, and writes nothing.
	ds, err := c.Kube.AppsV1().DaemonSets(ns).Get(t.Context(), "istio-cni-node", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err = harness.Run(t, append(installArgs(c.Kubeconfig, ns, "--dry-run"), "--set", "components.cni.k8s.resources.requests.cpu=123m")...)
	if err != nil {
		t.Fatalf("dry run of a change: %v\n%s", err, out)
	}
	for _, want := range []string{"DaemonSet/" + ns + "/istio-cni-node would be configured", "+++ after apply", "+            cpu: 123m", "-            cpu: 100m", "✔ Dry run complete, nothing was written (1 would be applied,"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry-run output lacks %q:\n%s", want, out)
		}
	}
	if after, err := c.Kube.AppsV1().DaemonSets(ns).Get(t.Context(), "istio-cni-node", metav1.GetOptions{}); err != nil || after.ResourceVersion != ds.ResourceVersion {
		t.Errorf("the dry run changed the DaemonSet (%v)", err)
	}

	// Turning CNI off prunes it.
	out, _, err = harness.Run(t, append(installArgs(c.Kubeconfig, ns, "-y", "-v"), "--set", "components.cni.enabled=false")...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "DaemonSet/"+ns+"/istio-cni-node removed") {
		t.Errorf("prune output:\n%s", out)
	}

	// Uninstall of the default revision: CNI again, then everything but Base goes.
	if _, _, err := harness.Run(t, installArgs(c.Kubeconfig, ns, "-y")...); err != nil {
		t.Fatal(err)
	}
	if _, _, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "uninstall", "--set", "values.global.istioNamespace="+ns); !isUsage(err) {
		t.Errorf("uninstall without a target: want a usage error, got %v", err)
	}
	out, _, err = harness.Run(t, "--kubeconfig", c.Kubeconfig, "-i", ns, "uninstall", "-r", "default", "-y", "--set", "namespace="+ns)
	if err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	// 7 objects and the revision's 3 install records (the dry run and the unchanged re-install wrote none).
	if !strings.Contains(out, "✔ Uninstall complete (10 removed)") || !strings.Contains(out, "Secret/"+ns+"/istioctl-install-default-v3 removed") {
		t.Errorf("uninstall output:\n%s", out)
	}
	if _, err := c.Kube.AppsV1().DaemonSets(ns).Get(t.Context(), "istio-cni-node", metav1.GetOptions{}); err == nil {
		t.Error("the CNI DaemonSet survived the uninstall")
	}
	if _, err := c.Kube.CoreV1().ServiceAccounts(ns).Get(t.Context(), "istio-reader-service-account", metav1.GetOptions{}); err != nil {
		t.Errorf("uninstall without --purge removed Base: %v", err)
	}
}
