package render

import (
	"encoding/json"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/render/internal/pathpatch"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// typedFor gives strategic merge patches the Go type whose patch strategy (merge lists by
// name, ...) applies.
var typedFor = map[string]any{
	"Deployment":              appsv1.Deployment{},
	"DaemonSet":               appsv1.DaemonSet{},
	"Service":                 corev1.Service{},
	"HorizontalPodAutoscaler": autoscalingv2.HorizontalPodAutoscaler{},
	"PodDisruptionBudget":     policyv1.PodDisruptionBudget{},
}

type k8sPatch struct {
	kind  string
	patch string // %s is the field's JSON value
}

// ApplyK8sSettings patches the instance's rendered objects with its components.<c>.k8s
// settings as upstream does: one strategic merge patch per field on the main workload (or
// its Service, HPA, PDB), then the overlays' path patches. Settings that feed chart values
// (replicaCount, hpaSpec, gateway service ports) are in the values too.
//
// raw is the k8s block as the user wrote it: re-encoding the typed settings would add the
// zero values of required fields (an empty scaleTargetRef) to the patches.
func ApplyK8sSettings(objs []*unstructured.Unstructured, inst component.Instance, raw map[string]any, revision string) error {
	k := inst.K8s
	if k == nil {
		return nil
	}
	if inst.WorkloadKind == "" {
		// Base has no workload to patch, but its overlays apply (to its ServiceAccount, ...).
		return applyOverlays(objs, inst, k.Overlays)
	}
	raw = deepCopyMap(raw)
	if inst.Multi {
		// Gateway ports reach the chart through values; patching them again would merge
		// the two lists.
		if svc, ok := raw["service"].(map[string]any); ok {
			delete(svc, "ports")
		}
	}
	wk, name, ctr := inst.WorkloadKind, inst.ResourceName(revision), inst.Container
	strategy := `{"spec":{"strategy":%s}}`
	if wk == "DaemonSet" {
		strategy = `{"spec":{"updateStrategy":%s}}`
	}
	container := func(field string) string {
		return fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":%q,%q:%%s}]}}}}`, ctr, field)
	}
	patches := map[string]k8sPatch{
		"affinity":            {wk, `{"spec":{"template":{"spec":{"affinity":%s}}}}`},
		"env":                 {wk, container("env")},
		"imagePullPolicy":     {wk, container("imagePullPolicy")},
		"readinessProbe":      {wk, container("readinessProbe")},
		"resources":           {wk, container("resources")},
		"volumeMounts":        {wk, container("volumeMounts")},
		"volumes":             {wk, `{"spec":{"template":{"spec":{"volumes":%s}}}}`},
		"nodeSelector":        {wk, `{"spec":{"template":{"spec":{"nodeSelector":%s}}}}`},
		"podAnnotations":      {wk, `{"spec":{"template":{"metadata":{"annotations":%s}}}}`},
		"priorityClassName":   {wk, `{"spec":{"template":{"spec":{"priorityClassName":%s}}}}`},
		"tolerations":         {wk, `{"spec":{"template":{"spec":{"tolerations":%s}}}}`},
		"securityContext":     {wk, `{"spec":{"template":{"spec":{"securityContext":%s}}}}`},
		"strategy":            {wk, strategy},
		"hpaSpec":             {"HorizontalPodAutoscaler", `{"spec":%s}`},
		"podDisruptionBudget": {"PodDisruptionBudget", `{"spec":%s}`},
		"serviceAnnotations":  {"Service", `{"metadata":{"annotations":%s}}`},
		"service":             {"Service", `{"spec":%s}`},
	}
	if wk == "Deployment" {
		patches["replicaCount"] = k8sPatch{wk, `{"spec":{"replicas":%s}}`}
	}
	for _, field := range sortedKeys(patches) {
		v, ok := raw[field]
		if !ok || spec.IsEmpty(v) {
			continue
		}
		p := patches[field]
		obj := find(objs, p.kind, name)
		if obj == nil {
			continue
		}
		val, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := strategicPatch(obj, fmt.Sprintf(p.patch, val)); err != nil {
			return fmt.Errorf("k8s.%s on %s %s: %w", field, p.kind, name, err)
		}
		if field == "podDisruptionBudget" {
			// Both bounds set: minAvailable gives way, as upstream.
			if _, hasMax, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "maxUnavailable"); hasMax {
				unstructured.RemoveNestedField(obj.Object, "spec", "minAvailable")
			}
		}
	}
	return applyOverlays(objs, inst, k.Overlays)
}

// OverlayError is an overlay that fits no object or path: which one, and why. The render
// names the file and line that set it (Renderer.Render).
type OverlayError struct {
	// Field is its path below the component's spec: k8s.overlays[i] or
	// k8s.overlays[i].patches[j].
	Field string
	// Detail follows the field in the message.
	Detail string
	Err    error
}

func (e *OverlayError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s%s: %v", e.Field, e.Detail, e.Err)
	}
	return e.Field + e.Detail
}

func (e *OverlayError) Unwrap() error { return e.Err }

// applyOverlays applies k8s.overlays: each patches one rendered object by path.
func applyOverlays(objs []*unstructured.Unstructured, inst component.Instance, overlays []v1alpha1.KubernetesOverlay) error {
	for i, o := range overlays {
		field := fmt.Sprintf("k8s.overlays[%d]", i)
		if o.Kind == "" || o.Name == "" {
			return &OverlayError{Field: field, Detail: fmt.Sprintf(": an overlay needs the kind and name of the object it patches (got kind %q, name %q)", o.Kind, o.Name)}
		}
		at := -1
		for j, x := range objs {
			if x.GetKind() == o.Kind && x.GetName() == o.Name {
				at = j
				break
			}
		}
		if at < 0 {
			return &OverlayError{Field: field, Detail: fmt.Sprintf(": no %s %q among the objects %s renders", o.Kind, o.Name, inst.Key())}
		}
		// A CRD read lazily is read whole, and patched it no longer prints as its text.
		if err := Materialize(objs[at : at+1]); err != nil {
			return err
		}
		obj := objs[at]
		pristine.Delete(obj)
		for j, p := range o.Patches {
			if err := pathpatch.Apply(obj.Object, p); err != nil {
				return &OverlayError{Field: fmt.Sprintf("%s.patches[%d]", field, j), Detail: fmt.Sprintf(" (%s on %s %s)", p.Path, o.Kind, o.Name), Err: err}
			}
		}
	}
	return nil
}

// RawK8s returns the instance's k8s block from the resolved tree.
func RawK8s(tree map[string]any, inst component.Instance) map[string]any {
	v, _ := spec.Lookup(tree, "spec", "components", inst.SpecKey)
	if inst.Multi {
		list, _ := v.([]any)
		v = nil
		for _, item := range list {
			if m, ok := item.(map[string]any); ok && m["name"] == inst.InstanceName {
				v = m
			}
		}
	}
	m, _ := v.(map[string]any)
	k, _ := m["k8s"].(map[string]any)
	return k
}

func deepCopyMap(m map[string]any) map[string]any {
	out := map[string]any{}
	if m != nil {
		out = spec.Merge(map[string]any{}, m)
	}
	return out
}

func sortedKeys(m map[string]k8sPatch) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func strategicPatch(obj *unstructured.Unstructured, patch string) error {
	typed, ok := typedFor[obj.GetKind()]
	if !ok {
		return fmt.Errorf("no patch strategy for kind %s", obj.GetKind())
	}
	orig, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	out, err := strategicpatch.StrategicMergePatch(orig, []byte(patch), typed)
	if err != nil {
		return err
	}
	patched := &unstructured.Unstructured{}
	if err := patched.UnmarshalJSON(out); err != nil {
		return err
	}
	obj.Object = patched.Object
	return nil
}
