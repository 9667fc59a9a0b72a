package translate_test

import (
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/translate"
	"github.com/istioctl-installer/istioctl/pkg/testing/rendertest"
)

func releases(t *testing.T, sets ...string) ([]translate.Release, *render.Renderer) {
	t.Helper()
	res, r, manifests := rendertest.SetsWith(t, sets...)
	rels, err := translate.Translate(r, res, manifests)
	if err != nil {
		t.Fatal(err)
	}
	return rels, r
}

func TestTranslate(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
		// want: release name → chart, namespace; differs: releases Helm renders otherwise.
		want    map[string][2]string
		differs map[string]string
	}{
		{name: "demo: every component, gateways too", sets: []string{"profile=demo"},
			want: map[string][2]string{"base": {"base", "istio-system"}, "pilot": {"istio-control/istio-discovery", "istio-system"},
				"istio-ingressgateway": {"gateways/istio-ingress", "istio-system"}, "istio-egressgateway": {"gateways/istio-egress", "istio-system"}}},
		{name: "ambient", sets: []string{"profile=ambient"},
			want: map[string][2]string{"base": {"base", "istio-system"}, "pilot": {"istio-control/istio-discovery", "istio-system"},
				"cni": {"istio-cni", "istio-system"}, "ztunnel": {"ztunnel", "istio-system"}}},
		{name: "a revision's istiod is its own release", sets: []string{"profile=minimal", "revision=canary"},
			want: map[string][2]string{"base": {"base", "istio-system"}, "pilot-canary": {"istio-control/istio-discovery", "istio-system"}}},
		{name: "a named gateway in its own namespace", sets: []string{"profile=minimal", "components.ingressGateways[0].name=edge",
			"components.ingressGateways[0].enabled=true", "components.ingressGateways[0].namespace=edge-ns"},
			want: map[string][2]string{"base": {"base", "istio-system"}, "pilot": {"istio-control/istio-discovery", "istio-system"},
				"edge": {"gateways/istio-ingress", "edge-ns"}}},
		{name: "k8s settings have no Helm value", sets: []string{"profile=minimal", "components.pilot.k8s.nodeSelector.disk=ssd"},
			want:    map[string][2]string{"base": {"base", "istio-system"}, "pilot": {"istio-control/istio-discovery", "istio-system"}},
			differs: map[string]string{"pilot": "Deployment/istio-system/istiod"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rels, _ := releases(t, tc.sets...)
			got := map[string][2]string{}
			for _, r := range rels {
				got[r.Name] = [2]string{r.Chart, r.Namespace}
				if d := strings.Join(r.Differs, ","); d != tc.differs[r.Name] {
					t.Errorf("%s: Helm renders %q otherwise, want %q", r.Name, d, tc.differs[r.Name])
				}
				if r.Values["global"].(map[string]any)["releaseLabel"] != "istio" {
					t.Errorf("%s: values without global.releaseLabel=istio", r.Name)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("releases %v, want %v", got, tc.want)
			}
			for n, w := range tc.want {
				if got[n] != w {
					t.Errorf("release %s: %v, want %v", n, got[n], w)
				}
			}
		})
	}
}

func TestFilesAndScripts(t *testing.T) {
	rels, r := releases(t, "profile=demo")
	files, err := translate.Files(rels, r.Charts)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]translate.File{}
	for _, f := range files {
		byPath[f.Path] = f
	}
	for _, p := range []string{"README.md", "base-values.yaml", "install-base.sh", "pilot-values.yaml", "install-pilot.sh",
		"istio-ingressgateway-values.yaml", "install-istio-ingressgateway.sh", "install-istio-egressgateway.sh",
		"charts/base/Chart.yaml", "charts/base/crds/crd-all.gen.yaml", "charts/istio-control/istio-discovery/Chart.yaml",
		"charts/gateways/istio-ingress/values.yaml", "charts/gateways/istio-egress/Chart.yaml"} {
		if _, ok := byPath[p]; !ok {
			t.Errorf("no %s", p)
		}
	}
	if m := byPath["install-pilot.sh"].Mode; m != 0o755 {
		t.Errorf("install-pilot.sh mode %v", m)
	}
	if _, ok := byPath["diff-pilot-helm-output.yaml"]; ok {
		t.Error("demo's renders differ")
	}
	script := string(byPath["install-pilot.sh"].Data)
	for _, want := range []string{
		"set -euo pipefail",
		"kubectl annotate --overwrite --namespace istio-system \\\n",
		"  Deployment.apps/istiod \\\n",
		"  MutatingWebhookConfiguration.admissionregistration.k8s.io/istio-sidecar-injector \\\n",
		"  meta.helm.sh/release-name=pilot meta.helm.sh/release-namespace=istio-system\n",
		"  app.kubernetes.io/managed-by=Helm\n",
		`helm upgrade --install pilot "${ISTIO_CHARTS:-charts}/istio-control/istio-discovery" --namespace istio-system -f pilot-values.yaml`,
	} {
		if !strings.Contains(script, want) {
			t.Errorf("install-pilot.sh lacks %q:\n%s", want, script)
		}
	}
	// Every object istioctl renders for the release is handed over, once per command.
	for _, rel := range rels {
		s := string(byPath[rel.ScriptFile()].Data)
		for _, o := range rel.Objects {
			arg := o.GroupVersionKind().GroupKind().String() + "/" + o.GetName() + " \\\n"
			if n := strings.Count(s, "  "+arg); n != 2 {
				t.Errorf("%s names %s %d times, want 2 (annotate, label)", rel.ScriptFile(), arg, n)
			}
		}
	}
	readme := string(byPath["README.md"].Data)
	for _, want := range []string{"`./install-base.sh`\n   - `./install-pilot.sh`\n   - `./install-istio-ingressgateway.sh`\n   - `./install-istio-egressgateway.sh`",
		"Helm release `istio-egressgateway` in namespace `istio-system`, chart `charts/gateways/istio-egress`"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q:\n%s", want, readme)
		}
	}
}

func TestTranslateDiffFiles(t *testing.T) {
	rels, r := releases(t, "profile=minimal", "components.pilot.k8s.nodeSelector.disk=ssd")
	files, err := translate.Files(rels, r.Charts)
	if err != nil {
		t.Fatal(err)
	}
	var helm, istioctl string
	for _, f := range files {
		switch f.Path {
		case "diff-pilot-helm-output.yaml":
			helm = string(f.Data)
		case "diff-pilot-istioctl-output.yaml":
			istioctl = string(f.Data)
		case "README.md":
			if !strings.Contains(string(f.Data), "⚠️ Helm renders 1 object(s) otherwise than istioctl") {
				t.Errorf("the README does not warn:\n%s", f.Data)
			}
		}
	}
	if !strings.Contains(istioctl, "disk: ssd") || strings.Contains(helm, "disk: ssd") || helm == "" {
		t.Errorf("the diff files do not show the node selector only istioctl renders")
	}
}
