package fleetrun_test

import (
	"encoding/base64"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/kubeflags"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
)

// linkGoldenDir holds upstream istioctl's create-remote-secret output for the bed's
// inputs (pkg/cmd's TestRecordUpstreamRemoteSecrets records them).
const linkGoldenDir = "../../../testdata/multicluster/"

// linkUpstreamGolden compares the Secret create-remote-secret prints (no ApplyTo) with
// upstream istioctl's for the same inputs on the bed.
func linkUpstreamGolden(t *testing.T, l *linkRig) {
	for _, tc := range []struct {
		name, ctx string
		set       func(*action.CreateRemoteSecret)
	}{
		{"name", "cluster-3", func(a *action.CreateRemoteSecret) { a.Name = "cluster-3" }},
		{"default-name", "cluster-3", nil},
		{"config", "cluster-1", func(a *action.CreateRemoteSecret) { a.Type, a.Name = action.SecretTypeConfig, "cluster-1" }},
		{"plugin", "cluster-3", func(a *action.CreateRemoteSecret) {
			a.Name, a.AuthType, a.AuthPluginName = "cluster-3", action.AuthPlugin, "gcp"
		}},
		{"server", "cluster-3", func(a *action.CreateRemoteSecret) {
			a.Name, a.Server, a.TLSServerName = "cluster-3", "https://192.0.2.200:6443", "api.cluster-3.test"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := l.with(t)
			plan, res, err := l.createSecret(tc.ctx, tc.set)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, linkGoldenDir+"create-remote-secret-"+tc.name+".yaml", []byte(harness.NormRemoteSecret(string(res.YAML), linkClusterUID(t, l.member(tc.ctx)))))
			loopback := slices.ContainsFunc(plan.Warnings, func(w string) bool { return strings.Contains(w, "likely not reachable from inside the cluster") })
			if want := tc.name != "server"; loopback != want {
				t.Errorf("loopback warning (want %v): %q", want, plan.Warnings)
			}
		})
	}
	t.Run("auth plugin config", func(t *testing.T) {
		// Upstream never reads --auth-plugin-config's value (its flag is bound to a copy):
		// config stays {}. Ours writes it.
		_, res, err := l.with(t).createSecret("cluster-3", func(a *action.CreateRemoteSecret) {
			a.Name, a.AuthType, a.AuthPluginName, a.AuthPluginConfig = "cluster-3", action.AuthPlugin, "gcp", map[string]string{"scopes": "cloud"}
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(res.YAML), "config:\n            scopes: cloud\n          name: gcp") {
			t.Errorf("the auth plugin's config is not in the kubeconfig:\n%s", res.YAML)
		}
	})
	t.Run("context namespace and kubeconfig CA", func(t *testing.T) {
		l := l.with(t)
		raw, err := clientcmd.LoadFromFile(l.bed.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		// The trap of upstream #49780: a context namespace must not move the Secret.
		raw.Contexts["cluster-3"].Namespace = "default"
		// Upstream #51376: the CA the kubeconfig trusts (here a bundle with one more CA)
		// is the one written, not the token Secret's.
		bundle := append(append([]byte{}, raw.Clusters[raw.Contexts["cluster-3"].Cluster].CertificateAuthorityData...), pki.New(t, pki.Valid).RootPEM...)
		raw.Clusters[raw.Contexts["cluster-3"].Cluster].CertificateAuthorityData = bundle
		path := filepath.Join(t.TempDir(), "kubeconfig")
		if err := clientcmd.WriteToFile(*raw, path); err != nil {
			t.Fatal(err)
		}
		_, res, err := l.createSecret("cluster-3", func(a *action.CreateRemoteSecret) {
			a.Name = "cluster-3"
			a.Kube = &kubeflags.Flags{Kubeconfig: path, Context: "cluster-3", Timeout: kubeflags.DefaultTimeout}
		})
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, linkGoldenDir+"create-remote-secret-name.yaml", []byte(harness.NormRemoteSecret(string(res.YAML), "")))
		ca := slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "the CA written is the one your kubeconfig trusts") })
		if !strings.Contains(string(res.YAML), base64.StdEncoding.EncodeToString(bundle)) || !ca {
			t.Errorf("the kubeconfig's CA bundle is not the one written: notes %q", res.Notes)
		}
	})
}
