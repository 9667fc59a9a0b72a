package render_test

import (
	"io"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/fingerprint"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// helmTemplate renders a chart directory as `helm template istio <dir> -n ns --include-crds`
// with vals does, through Helm's own install action.
func helmTemplate(t *testing.T, dir, ns string, vals map[string]any) []*unstructured.Unstructured {
	t.Helper()
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &action.Configuration{
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Releases:     storage.Init(driver.NewMemory()),
		Capabilities: chartutil.DefaultCapabilities,
	}
	kv, _ := chartutil.ParseKubeVersion(render.DefaultKubeVersion)
	cfg.Capabilities.KubeVersion = *kv
	install := action.NewInstall(cfg)
	install.DryRun, install.ClientOnly, install.Replace, install.IncludeCRDs = true, true, true, true
	install.ReleaseName, install.Namespace = "istio", ns
	rel, err := install.Run(ch, vals)
	if err != nil {
		t.Fatalf("helm template %s: %v", dir, err)
	}
	objs, err := render.ParseObjects([]byte(rel.Manifest))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestChartsWorkWithPlainHelm renders each chart as a Helm user would (`--set profile=...`
// and the image hub and tag, nothing istioctl-specific) and expects the objects our
// installer renders for the same profile.
func TestChartsWorkWithPlainHelm(t *testing.T) {
	for _, profile := range []string{"default", "demo", "ambient"} {
		res, err := spec.Resolve(spec.Options{Sets: []string{"profile=" + profile}})
		if err != nil {
			t.Fatal(err)
		}
		r, _ := render.NewRenderer("")
		ms, _, err := r.Render(res)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			t.Run(profile+"/"+m.Instance.Key(), func(t *testing.T) {
				vals := map[string]any{"global": map[string]any{"hub": "docker.io/istio", "tag": version.Version}}
				if hp, _ := spec.Lookup(res.Tree, "spec", "values", "profile"); hp != nil {
					vals["profile"] = hp
				}
				switch m.Instance.Name {
				case component.IngressGateways, component.EgressGateways:
					// The gateway charts take the gateway's name like any other value.
					root := strings.TrimPrefix(m.Instance.ValuesRoot, "gateways.")
					vals["gateways"] = map[string]any{root: map[string]any{"name": m.Instance.InstanceName}}
				case component.Base:
					vals["defaultRevision"] = "" // as the default profile sets it
				}
				got := fingerprint.Of(helmTemplate(t, "../../manifests/charts/"+m.Instance.Chart, m.Instance.Namespace, vals))
				want := fingerprint.Of(m.Objects)
				if diffs := fingerprint.Diff(want, got); len(diffs) > 0 {
					t.Errorf("plain Helm differs from the installer:\n%s", strings.Join(diffs, "\n"))
				}
			})
		}
	}
}
