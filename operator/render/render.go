package render

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/skew"
	"github.com/istioctl-installer/istioctl/operator/spec"

	"github.com/istioctl-installer/istioctl/operator/render/internal/fastyaml"
)

// ReleaseName is the Helm release name every chart is rendered with, as upstream.
const ReleaseName = "istio"

// DefaultKubeVersion is the Kubernetes version charts see when no cluster is asked: the
// oldest istioctl installs into.
const DefaultKubeVersion = "v" + skew.MinKubernetes

// Manifest is what one component instance renders to.
type Manifest struct {
	Instance component.Instance
	Objects  []*unstructured.Unstructured
	// texts are Objects printed ahead (Renderer.Printed), index by index.
	texts [][]byte
}

// Renderer renders resolved specs.
type Renderer struct {
	Charts *Charts
	// KubeVersion is the cluster version charts see (.Capabilities.KubeVersion).
	KubeVersion string
	// LazyCRDs parses pre-rendered CRDs only as far as their metadata: enough to sort and
	// print them (manifest generate), not to apply them (see Materialize).
	LazyCRDs bool
	// Printed says the objects will only be printed (Print), never changed after Render
	// (manifest generate): each instance prints its objects as soon as they are final, on
	// the render's goroutines, so printing overlaps the rendering of the other instances.
	Printed bool
}

// NewRenderer uses the embedded charts, or <manifestsDir>/charts.
func NewRenderer(manifestsDir string) (*Renderer, error) {
	c, err := NewCharts(manifestsDir)
	if err != nil {
		return nil, err
	}
	return &Renderer{Charts: c, KubeVersion: DefaultKubeVersion}, nil
}

// Render renders every enabled component instance of res, in dependency order. Warnings
// are the charts' NOTES.txt lines that start with "WARNING: ".
//
// only, when not empty, limits the render to those components.
func (r *Renderer) Render(res *spec.Resolved, only ...component.Name) ([]Manifest, []string, error) {
	var insts []component.Instance
	for _, inst := range component.Instances(res.IOP) {
		if len(only) == 0 || slices.Contains(only, inst.Name) {
			insts = append(insts, inst)
		}
	}
	// Instances render independently: all at once (their parsing and printing are spread
	// over the CPUs too), keeping their order.
	type result struct {
		objs     []*unstructured.Unstructured
		texts    [][]byte
		warnings []string
		err      error
	}
	results := make([]result, len(insts))
	var wg sync.WaitGroup
	for i, inst := range insts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			objs, warns, err := r.renderInstance(res.Tree, inst)
			var texts [][]byte
			if err == nil && r.Printed {
				texts, err = printAll(objs)
			}
			results[i] = result{objs, texts, warns, err}
		}()
	}
	wg.Wait()
	var out []Manifest
	var warnings []string
	var errs []error
	for i, inst := range insts {
		if err := results[i].err; err != nil {
			errs = append(errs, located(res, inst, fmt.Errorf("rendering %s: %w", inst.Key(), err)))
			continue
		}
		warnings = append(warnings, results[i].warnings...)
		out = append(out, Manifest{Instance: inst, Objects: results[i].objs, texts: results[i].texts})
	}
	return out, warnings, errors.Join(errs...)
}

// located puts the file and line (or --set flag) that set an overlay in front of its error.
func located(res *spec.Resolved, inst component.Instance, err error) error {
	var oe *OverlayError
	if !errors.As(err, &oe) {
		return err
	}
	path := "spec.components." + inst.SpecKey
	if inst.Multi {
		list, _ := spec.Lookup(res.Tree, "spec", "components", inst.SpecKey)
		items, _ := list.([]any)
		for i, item := range items {
			if m, ok := item.(map[string]any); ok && m["name"] == inst.InstanceName {
				path += fmt.Sprintf("[%d]", i)
			}
		}
	}
	path += "." + oe.Field
	source, line := res.Where(path)
	if source == "" {
		return err
	}
	msg := strings.TrimPrefix(oe.Detail, ": ")
	if oe.Err != nil {
		msg = strings.Trim(oe.Detail, " ()") + ": " + oe.Err.Error()
	}
	return v1alpha1.Problem{Source: source, Line: line, Path: path, Msg: msg}
}

func (r *Renderer) renderInstance(tree map[string]any, inst component.Instance) ([]*unstructured.Unstructured, []string, error) {
	objs, warnings, err := r.renderChart(inst.Chart, ReleaseName, inst.Namespace, Values(tree, inst), true)
	if err != nil {
		return nil, nil, err
	}
	revision, _ := spec.Lookup(tree, "spec", "revision")
	rev, _ := revision.(string)
	if err := ApplyK8sSettings(objs, inst, RawK8s(tree, inst), rev); err != nil {
		return nil, nil, err
	}
	if err := checkImages(objs); err != nil {
		return nil, nil, err
	}
	Sort(objs)
	return objs, warnings, nil
}

// RenderChart renders the chart in directory chart as Helm installs it: as release
// release in namespace, with vals as the release's values, the CRDs of its crds/ directory
// as written and no k8s settings. It is what `helm template` prints for the same input.
func (r *Renderer) RenderChart(chart, release, namespace string, vals map[string]any) ([]*unstructured.Unstructured, error) {
	objs, _, err := r.renderChart(chart, release, namespace, deepCopyMap(vals), false)
	if err != nil {
		return nil, err
	}
	Sort(objs)
	return objs, nil
}

// renderChart renders a chart's templates and reads its CRDs; relabel gives the CRDs the
// chart's standard labels, as upstream's istioctl output does. vals become the render's:
// the chart's defaults are merged into them.
func (r *Renderer) renderChart(dir, release, namespace string, vals map[string]any, relabel bool) ([]*unstructured.Unstructured, []string, error) {
	ch, err := r.Charts.Load(dir)
	if err != nil {
		return nil, nil, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	kv, err := chartutil.ParseKubeVersion(r.KubeVersion)
	if err != nil {
		return nil, nil, fmt.Errorf("Kubernetes version %q: %w", r.KubeVersion, err)
	}
	caps.KubeVersion = *kv
	rv, err := renderValues(ch, vals, chartutil.ReleaseOptions{
		Name: release, Namespace: namespace, Revision: 1, IsInstall: true,
	}, caps)
	if err != nil {
		return nil, nil, err
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		return nil, nil, cleanHelmError(err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	// The files parse independently: in parallel, kept in name order.
	parsed := make([][]*unstructured.Unstructured, len(names))
	errs := make([]error, len(names))
	each(len(names), func(i int) {
		if !strings.HasSuffix(names[i], "NOTES.txt") {
			parsed[i], errs[i] = parseText(files[names[i]])
		}
	})
	var objs []*unstructured.Unstructured
	var warnings []string
	for i, name := range names {
		if strings.HasSuffix(name, "NOTES.txt") {
			for _, line := range strings.Split(files[name], "\n") {
				if msg, ok := strings.CutPrefix(strings.TrimSpace(line), "WARNING: "); ok {
					warnings = append(warnings, msg)
				}
			}
			continue
		}
		if errs[i] != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, errs[i])
		}
		objs = append(objs, parsed[i]...)
	}
	var labels map[string]string
	if relabel {
		labels = chartLabels(ch.Metadata.Name, ch.Metadata.Version, ch.Metadata.AppVersion)
	}
	for _, f := range ch.CRDObjects() {
		crds, err := crdObjects(f.File.Data, labels, r.LazyCRDs)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.Filename, err)
		}
		objs = append(objs, crds...)
	}
	return objs, warnings, nil
}

// chartLabels are the labels every object of a chart carries (the charts' "istio.labels").
func chartLabels(name, version, appVersion string) map[string]string {
	chart := strings.TrimSuffix(truncate(strings.ReplaceAll(name+"-"+version, "+", "_"), 63), "-")
	return map[string]string{
		"app.kubernetes.io/instance":   ReleaseName,
		"app.kubernetes.io/managed-by": "Helm",
		"app.kubernetes.io/part-of":    "istio",
		"app.kubernetes.io/version":    appVersion,
		"helm.sh/chart":                chart,
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// cleanHelmError drops the engine's long template-path prefix from fail messages.
func cleanHelmError(err error) error {
	msg := err.Error()
	if i := strings.LastIndex(msg, "error calling fail: "); i >= 0 {
		return errors.New(msg[i+len("error calling fail: "):])
	}
	return err
}

// ParseObjects splits a YAML stream into objects, skipping empty documents.
func ParseObjects(data []byte) ([]*unstructured.Unstructured, error) {
	return parseText(string(data))
}

// parseText is ParseObjects of text (a chart's output), whose strings the objects share.
func parseText(text string) ([]*unstructured.Unstructured, error) {
	objs, err := fastyaml.Objects(text)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, m := range objs {
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out, nil
}
