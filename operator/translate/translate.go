// Package translate turns a resolved install spec into what Helm needs to install the same
// objects from the same charts, one Helm release per component instance (gateways
// included): the release's values, its chart, a script that hands the live objects istioctl
// installed to the release, and a README (upstream's `manifest translate` layout). It
// reads no cluster and writes no file: the caller writes what it returns.
package translate

import (
	"bytes"
	"fmt"
	"io/fs"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// ChartsDir is the output directory's folder holding the charts the scripts install.
const ChartsDir = "charts"

// Release is one component instance as a Helm release.
type Release struct {
	// Name is the release's name: the component's spec key (base, pilot, cni, ztunnel;
	// pilot-<revision> for a revision) or the gateway's name.
	Name      string
	Namespace string
	// Chart is the chart's directory under charts/ (e.g. istio-control/istio-discovery).
	Chart    string
	Instance component.Instance
	// Values are the release's values: those istioctl renders the chart with, and
	// global.releaseLabel, so that the objects keep the labels istioctl gave them.
	Values map[string]any
	// Objects are what istioctl renders for the instance; Helm the objects the chart
	// renders from Values as release Name, as helm template would print them.
	Objects, Helm []*unstructured.Unstructured
	// Differs names the objects Helm renders otherwise than istioctl (k8s settings and
	// overlays have no Helm value), beyond Exception.
	Differs []string
}

// Translate makes the releases of a resolved spec from its rendered manifests (in install
// order), rendering each chart as Helm would to say what differs.
func Translate(r *render.Renderer, res *spec.Resolved, manifests []render.Manifest) ([]Release, error) {
	revision := res.IOP.Spec.Revision
	var out []Release
	seen := map[string]bool{}
	for _, m := range manifests {
		inst := m.Instance
		rel := Release{Name: releaseName(inst, revision), Namespace: inst.Namespace, Chart: inst.Chart,
			Instance: inst, Values: render.Values(res.Tree, inst), Objects: m.Objects}
		if seen[rel.Namespace+"/"+rel.Name] {
			return nil, fmt.Errorf("two components would be Helm release %s in namespace %s: give the gateways distinct names", rel.Name, rel.Namespace)
		}
		seen[rel.Namespace+"/"+rel.Name] = true
		global, _ := rel.Values["global"].(map[string]any)
		if global == nil {
			global = map[string]any{}
			rel.Values["global"] = global
		}
		global["releaseLabel"] = render.ReleaseName
		// Helm reads the values from the YAML file: render from what it will read.
		y, err := rel.ValuesYAML()
		if err != nil {
			return nil, err
		}
		var asHelm map[string]any
		if err := yaml.Unmarshal(y, &asHelm); err != nil {
			return nil, fmt.Errorf("reading back the values of %s: %w", rel.Name, err)
		}
		if rel.Helm, err = r.RenderChart(rel.Chart, rel.Name, rel.Namespace, asHelm); err != nil {
			return nil, fmt.Errorf("rendering chart %s as Helm release %s: %w", rel.Chart, rel.Name, err)
		}
		rel.Differs = Differences(rel.Objects, rel.Helm)
		out = append(out, rel)
	}
	return out, nil
}

// releaseName is upstream's: the spec key, or the gateway's name; a revision's istiod is
// its own release, so that translating a canary does not take over the default one.
func releaseName(inst component.Instance, revision string) string {
	switch {
	case inst.Multi:
		return inst.InstanceName
	case inst.Name == component.Pilot && revision != "" && revision != "default":
		return inst.SpecKey + "-" + revision
	}
	return inst.SpecKey
}

// ValuesFile, ScriptFile and the diff files name the release's files in the output.
func (r Release) ValuesFile() string { return r.Name + "-values.yaml" }

// ScriptFile is the release's install script.
func (r Release) ScriptFile() string { return "install-" + r.Name + ".sh" }

// DiffFiles are the two renders written side by side when they differ.
func (r Release) DiffFiles() (helm, istioctl string) {
	return "diff-" + r.Name + "-helm-output.yaml", "diff-" + r.Name + "-istioctl-output.yaml"
}

// ValuesYAML is the release's values file.
func (r Release) ValuesYAML() ([]byte, error) {
	y, err := yaml.Marshal(r.Values)
	if err != nil {
		return nil, fmt.Errorf("writing the values of %s: %w", r.Name, err)
	}
	return y, nil
}

// Exception says o is an object istioctl and Helm render differently by design, even from
// the same values: the istiod `values` ConfigMap records the values it was rendered with,
// and the translated ones add global.releaseLabel.
func Exception(o *unstructured.Unstructured) bool {
	name := o.GetName()
	return o.GetKind() == "ConfigMap" && o.GetLabels()["app.kubernetes.io/name"] == "istiod" &&
		(name == "values" || strings.HasPrefix(name, "values-"))
}

// Differences names (Kind/namespace/name) the objects two renders do not share or render
// differently, Exception aside.
func Differences(a, b []*unstructured.Unstructured) []string {
	index := func(objs []*unstructured.Unstructured) map[ref.Ref]*unstructured.Unstructured {
		m := map[ref.Ref]*unstructured.Unstructured{}
		for _, o := range objs {
			if !Exception(o) {
				m[ref.Of(o)] = o
			}
		}
		return m
	}
	ia, ib := index(a), index(b)
	var out []string
	for k, o := range ia {
		if p, ok := ib[k]; !ok || !reflect.DeepEqual(o.Object, p.Object) {
			out = append(out, ref.Of(o).String())
		}
	}
	for k, o := range ib {
		if _, ok := ia[k]; !ok {
			out = append(out, ref.Of(o).String())
		}
	}
	sort.Strings(out)
	return out
}

// Script is the release's install script: it annotates and labels the live objects as
// Helm's own (one kubectl call per namespace), then installs the release over them from
// the chart in charts/, with its values. Nothing is recreated: Helm adopts objects that
// carry its annotations.
func (r Release) Script() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, `#!/usr/bin/env bash
# Written by istioctl manifest translate. Moves what istioctl installed of %s under the
# Helm release %s in namespace %s; nothing is recreated. See README.md.
set -euo pipefail
cd "$(dirname "$0")"

# Mark the objects as the release's: Helm adopts objects that carry its annotations.
`, title(r.Instance), r.Name, r.Namespace)
	groups := map[string][]string{}
	for _, o := range r.Objects {
		ns := o.GetNamespace()
		if ns == "" {
			ns = r.Namespace // cluster-scoped: any namespace flag will do
		}
		groups[ns] = append(groups[ns], resourceArg(o))
	}
	namespaces := make([]string, 0, len(groups))
	for ns := range groups {
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	for _, ns := range namespaces {
		args := strings.Join(groups[ns], " \\\n  ")
		fmt.Fprintf(&b, "kubectl annotate --overwrite --namespace %s \\\n  %s \\\n  meta.helm.sh/release-name=%s meta.helm.sh/release-namespace=%s\n",
			ns, args, r.Name, r.Namespace)
		fmt.Fprintf(&b, "kubectl label --overwrite --namespace %s \\\n  %s \\\n  app.kubernetes.io/managed-by=Helm\n", ns, args)
	}
	fmt.Fprintf(&b, `
# Install the release over them, from the chart istioctl renders them with.
helm upgrade --install %s "${ISTIO_CHARTS:-%s}/%s" --namespace %s -f %s
`, r.Name, ChartsDir, r.Chart, r.Namespace, r.ValuesFile())
	return b.String()
}

// resourceArg names an object for kubectl: Kind.group/name.
func resourceArg(o *unstructured.Unstructured) string {
	gk := o.GroupVersionKind().GroupKind()
	return gk.String() + "/" + o.GetName()
}

func title(inst component.Instance) string {
	if inst.InstanceName != "" {
		return fmt.Sprintf("%s (%s)", inst.Title, inst.InstanceName)
	}
	return inst.Title
}

// File is one file of the output: a path relative to the output directory.
type File struct {
	Path string
	Data []byte
	Mode fs.FileMode
}

// Files are the output of releases: per release its values, its script (executable) and,
// when the renders differ, both renders; the charts the scripts install, copied from
// charts; and the README.
func Files(releases []Release, charts *render.Charts) ([]File, error) {
	var out []File
	copied := map[string]bool{}
	for _, r := range releases {
		y, err := r.ValuesYAML()
		if err != nil {
			return nil, err
		}
		out = append(out, File{Path: r.ValuesFile(), Data: y, Mode: 0o644},
			File{Path: r.ScriptFile(), Data: []byte(r.Script()), Mode: 0o755})
		if len(r.Differs) > 0 {
			helmName, istioctlName := r.DiffFiles()
			hy, err := render.YAML(r.Helm)
			if err != nil {
				return nil, err
			}
			iy, err := render.YAML(r.Objects)
			if err != nil {
				return nil, err
			}
			out = append(out, File{Path: helmName, Data: hy, Mode: 0o644}, File{Path: istioctlName, Data: iy, Mode: 0o644})
		}
		if copied[r.Chart] {
			continue
		}
		copied[r.Chart] = true
		files, err := charts.Files(r.Chart)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			out = append(out, File{Path: ChartsDir + "/" + r.Chart + "/" + f.Name, Data: f.Data, Mode: 0o644})
		}
	}
	out = append(out, File{Path: "README.md", Data: []byte(Readme(releases)), Mode: 0o644})
	return out, nil
}
