package admission

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
)

// Reference is a ConfigMap or Secret a workload's pods cannot start without: a volume, a
// projected source, an env valueFrom or an envFrom that does not say optional: true. The
// pod is admitted, then stays in ContainerCreating (a volume) or CreateContainerConfigError
// (env) until the object exists.
type Reference struct {
	// Workload is Kind/namespace/name.
	Workload string
	// Path is the field that names the object, from the workload's root
	// (spec.template.spec.containers[0].env[2].valueFrom.secretKeyRef).
	Path string
	// Kind is ConfigMap or Secret; Namespace the workload's.
	Kind, Namespace, Name string
}

// Object is the referenced object, Kind/namespace/name.
func (r Reference) Object() string { return ref.New(r.Kind, r.Namespace, r.Name).String() }

// IstiodPublished are the ConfigMaps istiod writes into every namespace it watches, so a
// workload may need them before they exist: the mesh's root certificate.
var IstiodPublished = []string{"istio-ca-root-cert"}

// References are the ConfigMaps and Secrets w's pod template needs (none when w is not a
// workload), in the template's order.
func References(w *unstructured.Unstructured) []Reference {
	path, ok := templatePath[w.GroupVersionKind().GroupKind().String()]
	if !ok {
		return nil
	}
	raw, found, _ := unstructured.NestedMap(w.Object, append(path, "spec")...)
	if !found {
		return nil
	}
	var spec corev1.PodSpec
	if runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec) != nil {
		return nil // a template the apiserver refuses: the admission survey says so
	}
	refs := &refList{workload: ref.Of(w).String(), namespace: w.GetNamespace(), root: strings.Join(path, ".") + ".spec"}
	for i, v := range spec.Volumes {
		at := fmt.Sprintf("volumes[%d]", i)
		if s := v.Secret; s != nil && !isTrue(s.Optional) {
			refs.add(at+".secret.secretName", "Secret", s.SecretName)
		}
		if c := v.ConfigMap; c != nil && !isTrue(c.Optional) {
			refs.add(at+".configMap.name", "ConfigMap", c.Name)
		}
		if p := v.Projected; p != nil {
			for j, src := range p.Sources {
				at := fmt.Sprintf("%s.projected.sources[%d]", at, j)
				if s := src.Secret; s != nil && !isTrue(s.Optional) {
					refs.add(at+".secret.name", "Secret", s.Name)
				}
				if c := src.ConfigMap; c != nil && !isTrue(c.Optional) {
					refs.add(at+".configMap.name", "ConfigMap", c.Name)
				}
			}
		}
	}
	for _, set := range []struct {
		field      string
		containers []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i, c := range set.containers {
			at := fmt.Sprintf("%s[%d]", set.field, i)
			for j, e := range c.Env {
				if e.ValueFrom == nil {
					continue
				}
				at := fmt.Sprintf("%s.env[%d].valueFrom", at, j)
				if s := e.ValueFrom.SecretKeyRef; s != nil && !isTrue(s.Optional) {
					refs.add(at+".secretKeyRef.name", "Secret", s.Name)
				}
				if m := e.ValueFrom.ConfigMapKeyRef; m != nil && !isTrue(m.Optional) {
					refs.add(at+".configMapKeyRef.name", "ConfigMap", m.Name)
				}
			}
			for j, e := range c.EnvFrom {
				at := fmt.Sprintf("%s.envFrom[%d]", at, j)
				if s := e.SecretRef; s != nil && !isTrue(s.Optional) {
					refs.add(at+".secretRef.name", "Secret", s.Name)
				}
				if m := e.ConfigMapRef; m != nil && !isTrue(m.Optional) {
					refs.add(at+".configMapRef.name", "ConfigMap", m.Name)
				}
			}
		}
	}
	return refs.out
}

type refList struct {
	workload, namespace, root string
	out                       []Reference
}

func (l *refList) add(path, kind, name string) {
	if name == "" {
		return // the apiserver refuses the template: the admission survey says so
	}
	l.out = append(l.out, Reference{Workload: l.workload, Path: l.root + "." + path, Kind: kind, Namespace: l.namespace, Name: name})
}

func isTrue(b *bool) bool { return b != nil && *b }

// Needed are the references of objs' workloads that objs themselves do not satisfy: not
// rendered by the install, and not one istiod publishes (IstiodPublished). The cluster
// must hold them before the install.
func Needed(objs []*unstructured.Unstructured) []Reference {
	rendered := map[string]bool{}
	for _, o := range objs {
		rendered[ref.Of(o).String()] = true
	}
	var out []Reference
	for _, o := range objs {
		for _, r := range References(o) {
			if rendered[r.Object()] || (r.Kind == "ConfigMap" && published(r.Name)) {
				continue
			}
			out = append(out, r)
		}
	}
	return out
}

func published(name string) bool {
	for _, p := range IstiodPublished {
		if p == name {
			return true
		}
	}
	return false
}

// Missing are the references of Needed(objs) the cluster lacks (one metadata read per
// object; a Secret's data is never read). An object that cannot be read (no permission)
// is in cannot, by the object it names.
func Missing(ctx context.Context, c *kube.Client, objs []*unstructured.Unstructured) (missing []Reference, cannot map[string]error, err error) {
	needed := Needed(objs)
	known := map[string]*bool{}
	cannot = map[string]error{}
	for _, r := range needed {
		if _, ok := known[r.Object()]; ok {
			continue
		}
		gvk := kube.SecretGVK
		if r.Kind == "ConfigMap" {
			gvk = kube.ConfigMapGVK
		}
		m, err := c.GetMeta(ctx, gvk, r.Namespace, r.Name)
		switch {
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			cannot[r.Object()] = err
			known[r.Object()] = nil
			continue
		case err != nil:
			return nil, nil, err
		}
		exists := m != nil
		known[r.Object()] = &exists
	}
	for _, r := range needed {
		if e := known[r.Object()]; e != nil && !*e {
			missing = append(missing, r)
		}
	}
	sort.SliceStable(missing, func(i, j int) bool { return missing[i].Workload < missing[j].Workload })
	return missing, cannot, nil
}
