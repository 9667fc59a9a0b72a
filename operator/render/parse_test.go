package render

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"github.com/istioctl-installer/istioctl/manifests"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/spec"

	"github.com/istioctl-installer/istioctl/operator/render/internal/fastyaml/fastyamltest"
)

func TestParseChartOutputAsYAMLv3(t *testing.T) {
	files, fast := 0, 0
	for _, p := range []string{"default", "demo", "ambient", "remote", "minimal"} {
		res, err := spec.Resolve(spec.Options{Sets: []string{"profile=" + p}})
		if err != nil {
			t.Fatal(err)
		}
		r, _ := NewRenderer("")
		for _, inst := range component.Instances(res.IOP) {
			ch, err := r.Charts.Load(inst.Chart)
			if err != nil {
				t.Fatal(err)
			}
			rv, err := chartutil.ToRenderValues(ch, Values(res.Tree, inst), chartutil.ReleaseOptions{Name: ReleaseName, Namespace: inst.Namespace, Revision: 1, IsInstall: true}, chartutil.DefaultCapabilities)
			if err != nil {
				t.Fatal(err)
			}
			out, err := engine.Render(ch, rv)
			if err != nil {
				t.Fatal(err)
			}
			for name, text := range out {
				if strings.HasSuffix(name, "NOTES.txt") {
					continue
				}
				files++
				if fastyamltest.Parse(t, p+":"+name, text) {
					fast++
				} else {
					t.Logf("yaml.v3 reads %s:%s", p, name)
				}
			}
		}
	}
	// The pre-rendered CRDs too (install parses them whole).
	crds, err := manifests.Charts.ReadFile("charts/base/crds/crd-all.gen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files++
	if fastyamltest.Parse(t, "crd-all.gen.yaml", string(crds)) {
		fast++
	}
	t.Logf("fastyaml.Parse read %d of %d chart files", fast, files)
	if fast < files*9/10 {
		t.Errorf("fastyaml.Parse read %d of %d chart files itself, want at least 90%%", fast, files)
	}
}
