package cmd_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	opcomplete "github.com/istioctl-installer/istioctl/operator/complete"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestCompletionE2E: the names completion offers come from the cluster: a revision's istiod
// Deployment, a tag's webhook configuration, a revision's install records, the namespaces;
// with the kubeconfig as a flag and through ISTIOCTL_KUBECONFIG.
func TestCompletionE2E(t *testing.T) {
	c := cluster.Get(t)
	offline(t)
	ctx := context.Background()
	ns := c.Namespace(t)
	const rev = "compe2e"
	labels := map[string]string{"app": "istiod", "istio.io/rev": rev}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "istiod-" + rev, Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "discovery", Image: "pilot:1.30.0"}}},
			},
		},
	}
	if _, err := c.Kube.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hook := &admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{
		Name: "istio-revision-tag-compe2e", Labels: map[string]string{"istio.io/tag": "comptag", "istio.io/rev": rev}}}
	if _, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, hook, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), hook.Name, metav1.DeleteOptions{})
	})
	client := harness.Client(t, c)
	store := &history.Store{Client: client, Namespace: ns}
	for _, profile := range []string{"default", "demo"} {
		r := &history.Record{Revision: rev, Time: time.Now(), Action: history.ActionInstall, Outcome: history.Succeeded, Profile: profile, Spec: "spec: {}\n"}
		if err := store.Create(ctx, r, 0); err != nil {
			t.Fatal(err)
		}
	}

	for _, via := range []string{"flag", "env"} {
		k := []string{"--kubeconfig", c.Kubeconfig}
		if via == "env" {
			k = nil
			t.Setenv("ISTIOCTL_KUBECONFIG", c.Kubeconfig)
		}
		for _, tc := range []struct {
			args []string
			want []string // exactly
			has  []string // at least
		}{
			{args: []string{"history", "-r", ""}, has: []string{rev}},
			{args: []string{"tag", "set", "prod", "--revision", ""}, has: []string{rev}},
			{args: []string{"install", "--set", "revision="}, has: []string{"revision=" + rev}},
			{args: []string{"-i", ns, "tag", "remove", ""}, has: []string{"comptag"}},
			{args: []string{"-i", ns, "tag", "remove", "comptag", ""}, want: nil},
			{args: []string{"-i", ns, "rollback", "-r", rev, ""}, want: []string{"2", "1"}},
			{args: []string{"-i", ns, "rollback", ""}, want: nil}, // the default revision has none here
			{args: []string{"-n", ""}, has: []string{ns, "kube-system"}},
		} {
			what := via + ": " + strings.Join(tc.args, " ")
			got := complete(t, append(slices.Clone(k), tc.args...)...)
			if tc.has == nil && !slices.Equal(got.candidates, tc.want) {
				t.Errorf("%s: %q, want %q", what, got.candidates, tc.want)
			}
			for _, h := range tc.has {
				if !slices.Contains(got.candidates, h) {
					t.Errorf("%s: %q lacks %q", what, got.candidates, h)
				}
			}
			got.quiet(t, what)
		}
	}
	// The records' descriptions say what each was.
	out, _, _ := harness.Run(t, "__complete", "--kubeconfig", c.Kubeconfig, "-i", ns, "rollback", "-r", rev, "")
	if !strings.Contains(out, "2\t") || !strings.Contains(out, "succeeded, profile demo") {
		t.Errorf("rollback completion lacks the record's description:\n%s", out)
	}
}

// TestCompletionUnreachable: with a cluster that refuses or never answers, each cluster
// completion gives up under its own short timeout (operator/complete.Timeout, 500 ms), with no
// candidates and nothing on stderr. The bound is load-proof by its size: ten times that
// timeout, and half of what the silent server would hold a question asked without it
// (client-go's 10 s TLS handshake timeout; the client's own is 15 s), so it tells the two
// apart without timing how fast a loaded machine runs the command.
func TestCompletionUnreachable(t *testing.T) {
	offline(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0") // the handshake completes, nothing answers
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	for _, server := range []string{closed, silent.Addr().String()} {
		for _, args := range [][]string{
			{"history", "-r", ""},
			{"install", "--set", "revision="},
			{"tag", "remove", ""},
			{"rollback", ""},
			{"-n", ""},
		} {
			what := server + ": " + strings.Join(args, " ")
			start := time.Now()
			got := complete(t, append([]string{"--server", "https://" + server, "--token", "some-token", "--insecure-skip-tls-verify"}, args...)...)
			if took := time.Since(start); took > 10*opcomplete.Timeout {
				t.Errorf("%s: took %v: it did not give up under the completion's own %v timeout", what, took.Round(time.Millisecond), opcomplete.Timeout)
			}
			if len(got.candidates) > 0 {
				t.Errorf("%s: %q", what, got.candidates)
			}
			got.quiet(t, what)
		}
	}
}
