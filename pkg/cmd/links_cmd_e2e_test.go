package cmd_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestRemoteClustersBrokenE2E: remote-clusters prints a broken link's cause and exits 1
// (what the link checks find is operator/action/fleetrun's TestLinksE2E).
func TestRemoteClustersBrokenE2E(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "istio-remote-secret-cluster-2", Labels: map[string]string{"istio/multiCluster": "true"},
		Annotations: map[string]string{"networking.istio.io/cluster": "cluster-9"}}, Data: map[string][]byte{"cluster-2": []byte("not a kubeconfig")}}
	if _, err := c.Kube.CoreV1().Secrets(ns).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.Run("remote-clusters", "-i", ns)
	if r.Code != 1 || !strings.Contains(r.Stdout, `annotation says "cluster-9" but its data key`) || !strings.Contains(r.Stderr, "remote-clusters found broken links") {
		t.Errorf("remote-clusters with a broken link: exit %d, want 1 naming the cause\n%s", r.Code, r.Output())
	}
}

// TestRecordUpstreamRemoteSecrets records, with ISTIOCTL_RECORD_UPSTREAM=1, upstream
// istioctl's create-remote-secret output on the bed (bin/upstream/istioctl; make bench-spec
// installs it): the goldens operator/action/fleetrun's TestLinksE2E compares ours with.
func TestRecordUpstreamRemoteSecrets(t *testing.T) {
	if os.Getenv("ISTIOCTL_RECORD_UPSTREAM") != "1" {
		t.Skip("records only with ISTIOCTL_RECORD_UPSTREAM=1")
	}
	bed := cluster.GetBed(t, 3)
	ctx := context.Background()
	// --type config takes istiod's ServiceAccount, which an install makes.
	c1 := bed.Clusters[0]
	if _, err := c1.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "istio-system"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := c1.Kube.CoreV1().ServiceAccounts("istio-system").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "istiod"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, ctx string
		args      []string
	}{
		{"name", "cluster-3", []string{"--name", "cluster-3"}},
		{"default-name", "cluster-3", nil},
		{"config", "cluster-1", []string{"--type", "config", "--name", "cluster-1"}},
		{"plugin", "cluster-3", []string{"--name", "cluster-3", "--auth-type", "plugin", "--auth-plugin-name", "gcp"}},
		{"server", "cluster-3", []string{"--name", "cluster-3", "--server", "https://192.0.2.200:6443", "--tls-server-name", "api.cluster-3.test"}},
	} {
		args := append([]string{"--kubeconfig", bed.Kubeconfig, "--context", tc.ctx, "create-remote-secret"}, tc.args...)
		cmd := exec.Command("../../bin/upstream/istioctl", args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("upstream istioctl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		member := bed.Clusters[0]
		for _, c := range bed.Clusters {
			if c.Context == tc.ctx {
				member = c
			}
		}
		ns, err := member.Kube.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		path := "../../testdata/multicluster/create-remote-secret-" + tc.name + ".yaml"
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(harness.NormRemoteSecret(string(out), string(ns.UID))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
