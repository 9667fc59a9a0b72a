package revision

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/skew"
)

// Revision is one control plane revision and what runs under it.
type Revision struct {
	// Name is the revision ("default" for none).
	Name string `json:"revision"`
	// Namespace is where its istiod runs ("" when none does: a revision whose istiod is
	// gone that still has pods or components).
	Namespace string `json:"namespace,omitempty"`
	// Version is its istiod's version ("" when it has none).
	Version    string      `json:"version,omitempty"`
	Components []Component `json:"components"`
	Tags       []string    `json:"tags"`
	Namespaces []Selection `json:"namespaces"`
	Workloads  []Workload  `json:"workloads"`
}

// Component is a workload an install of the revision runs: its istiod, a gateway, a node
// agent.
type Component struct {
	// Name is the component (operator.istio.io/component: Pilot, IngressGateways, ...).
	Name    string `json:"component"`
	Object  string `json:"object"`
	Version string `json:"version"`
	Ready   string `json:"ready"`
}

// Selection is a namespace whose pods the revision injects, and the label that says so.
type Selection struct {
	Namespace string `json:"namespace"`
	// Label is the namespace's label: istio.io/rev=<revision or tag> or istio-injection=enabled.
	Label string `json:"label"`
	// Tag is the tag the label names, when it names one (istio-injection=enabled: default).
	Tag string `json:"tag,omitempty"`
}

// Workload is a pod's owner (a Deployment, a DaemonSet, ... or the pod itself) and its
// pods whose proxies the revision injected.
type Workload struct {
	Namespace string  `json:"namespace"`
	Kind      string  `json:"kind"`
	Name      string  `json:"name"`
	Pods      []Proxy `json:"pods"`
}

// Ref is the workload's reference.
func (w Workload) Ref() ref.Ref { return ref.New(w.Kind, w.Namespace, w.Name) }

// Proxy is an injected pod's proxy.
type Proxy struct {
	Pod     string `json:"pod"`
	Version string `json:"version"`
	// Skew is the broken rule when the proxy is out of skew with its revision's istiod.
	Skew *skew.Verdict `json:"skew,omitempty"`
}

// OutOfSkew counts the revision's proxies out of skew.
func (r *Revision) OutOfSkew() int {
	n := 0
	for _, w := range r.Workloads {
		for _, p := range w.Pods {
			if p.Skew != nil {
				n++
			}
		}
	}
	return n
}

// The labels and annotation that say who injects a pod.
const (
	labelInjection   = "istio-injection"
	annotationStatus = "sidecar.istio.io/status"
	proxyContainer   = "istio-proxy"
	defaultTag       = "default"
)

// List finds every revision in the cluster: those with an istiod, then those with only
// components or injected pods left, by name. istioNamespace is where the tags' Services
// are looked for.
func List(ctx context.Context, c *kube.Client, istioNamespace string) ([]*Revision, error) {
	cps, err := ControlPlanes(ctx, c, "")
	if err != nil {
		return nil, err
	}
	byName := map[string]*Revision{}
	get := func(name string) *Revision {
		r, ok := byName[name]
		if !ok {
			r = &Revision{Name: name, Components: []Component{}, Tags: []string{}, Namespaces: []Selection{}, Workloads: []Workload{}}
			byName[name] = r
		}
		return r
	}
	for _, cp := range cps {
		r := get(cp.Revision)
		r.Namespace, r.Version = cp.Namespace, cp.Version
	}
	if err := components(ctx, c, get); err != nil {
		return nil, err
	}
	tags, err := Tags(ctx, c, istioNamespace)
	if err != nil {
		return nil, err
	}
	tagRev := map[string]string{}
	for _, t := range tags {
		tagRev[t.Tag] = t.Revision
		get(t.Revision).Tags = append(get(t.Revision).Tags, t.Tag)
	}
	if err := namespaces(ctx, c, tagRev, byName, get); err != nil {
		return nil, err
	}
	if err := proxies(ctx, c, get); err != nil {
		return nil, err
	}
	out := make([]*Revision, 0, len(byName))
	for _, r := range byName {
		sort.Strings(r.Tags)
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// components adds the Deployments and DaemonSets an install labelled with a component.
func components(ctx context.Context, c *kube.Client, get func(string) *Revision) error {
	lists, err := c.ListKinds(ctx, []schema.GroupVersionKind{kube.DeploymentGVK, kube.DaemonSetGVK}, ownership.LabelComponent)
	if err != nil {
		return err
	}
	for _, items := range lists {
		for i := range items {
			o := &items[i]
			l := o.GetLabels()
			r := get(ownership.Rev(l[ownership.LabelRevision]))
			r.Components = append(r.Components, Component{
				Name: l[ownership.LabelComponent], Object: ref.Of(o).String(),
				Version: VersionOf(o), Ready: ready(o),
			})
		}
	}
	return nil
}

// VersionOf is the version of a workload an install applied: its version label, else the
// tag of its first container's image.
func VersionOf(o *unstructured.Unstructured) string {
	if v := o.GetLabels()[ownership.LabelVersion]; v != "" {
		return v
	}
	ctrs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	if len(ctrs) > 0 {
		m, _ := ctrs[0].(map[string]any)
		if img, _ := m["image"].(string); img != "" {
			return ImageTag(img)
		}
	}
	return ""
}

func ready(o *unstructured.Unstructured) string {
	if o.GetKind() == "DaemonSet" {
		n, _, _ := unstructured.NestedInt64(o.Object, "status", "numberReady")
		want, _, _ := unstructured.NestedInt64(o.Object, "status", "desiredNumberScheduled")
		return fmt.Sprintf("%d/%d", n, want)
	}
	n, _, _ := unstructured.NestedInt64(o.Object, "status", "readyReplicas")
	want, ok, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
	if !ok {
		want = 1
	}
	return fmt.Sprintf("%d/%d", n, want)
}

// namespaces adds each namespace to the revision that injects its pods, as the injectors'
// selectors decide: istio-injection=enabled goes to the default tag (or, without one, the
// default revision) and wins over istio.io/rev, which names a tag or a revision.
func namespaces(ctx context.Context, c *kube.Client, tagRev map[string]string, known map[string]*Revision, get func(string) *Revision) error {
	nss, err := c.ListMetadata(ctx, kube.NamespaceGVK, "")
	if err != nil {
		return err
	}
	for _, ns := range nss {
		l := ns.GetLabels()
		var s Selection
		var rev string
		switch inj, has := l[labelInjection]; {
		case has && inj == "enabled":
			s = Selection{Namespace: ns.GetName(), Label: labelInjection + "=enabled"}
			if r, ok := tagRev[defaultTag]; ok {
				s.Tag, rev = defaultTag, r
			} else {
				rev = ownership.DefaultRevision
			}
		case has:
			continue // disabled, or a value no injector selects
		case l[ownership.LabelRevision] != "":
			v := l[ownership.LabelRevision]
			s = Selection{Namespace: ns.GetName(), Label: ownership.LabelRevision + "=" + v}
			rev = v
			if r, ok := tagRev[v]; ok && known[v] == nil {
				s.Tag, rev = v, r
			}
		default:
			continue
		}
		get(rev).Namespaces = append(get(rev).Namespaces, s)
	}
	return nil
}

// status is the part of sidecar.istio.io/status that names the injecting revision.
type status struct {
	Revision string `json:"revision"`
}

// proxies adds every injected pod to the revision its status names, grouped by workload,
// and marks the proxies out of skew with the revision's istiod.
func proxies(ctx context.Context, c *kube.Client, get func(string) *Revision) error {
	items, err := injectedPods(ctx, c)
	if err != nil {
		return err
	}
	type key struct{ rev, ns, kind, name string }
	index := map[key]int{}
	for i := range items {
		var pod corev1.Pod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(items[i].Object, &pod); err != nil {
			return fmt.Errorf("reading pod %s/%s: %w", items[i].GetNamespace(), items[i].GetName(), err)
		}
		raw := pod.Annotations[annotationStatus]
		if raw == "" {
			continue
		}
		var st status
		_ = json.Unmarshal([]byte(raw), &st)
		img := proxyImage(&pod)
		if img == "" {
			continue // the status stayed, the proxy was removed
		}
		r := get(ownership.Rev(st.Revision))
		p := Proxy{Pod: pod.Name, Version: ImageTag(img)}
		if r.Version != "" {
			if v := skew.Proxy(r.Version, p.Version); !v.OK {
				p.Skew = &v
			}
		}
		kind, name := owner(&pod)
		k := key{r.Name, pod.Namespace, kind, name}
		i, ok := index[k]
		if !ok {
			i = len(r.Workloads)
			index[k] = i
			r.Workloads = append(r.Workloads, Workload{Namespace: pod.Namespace, Kind: kind, Name: name})
		}
		r.Workloads[i].Pods = append(r.Workloads[i].Pods, p)
	}
	return nil
}

// injectedPods lists in full only the namespaces holding a pod with an injection status,
// found from the pods' metadata a page at a time: a cluster without injected pods (a
// precheck before the first install) costs one metadata list, not every pod's spec.
func injectedPods(ctx context.Context, c *kube.Client) ([]unstructured.Unstructured, error) {
	var nss []string
	seen := map[string]bool{}
	err := c.EachMeta(ctx, kube.PodGVK, "", func(m *metav1.PartialObjectMetadata) {
		if m.Annotations[annotationStatus] != "" && !seen[m.Namespace] {
			seen[m.Namespace] = true
			nss = append(nss, m.Namespace)
		}
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(nss)
	var out []unstructured.Unstructured
	for _, ns := range nss {
		items, err := c.ListIn(ctx, kube.PodGVK, ns, "")
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

func proxyImage(pod *corev1.Pod) string {
	for _, ctr := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		if ctr.Name == proxyContainer {
			return ctr.Image
		}
	}
	return ""
}

// owner is the pod's workload: a ReplicaSet's Deployment (named by cutting the
// pod-template-hash, as the Deployment controller names its ReplicaSets), another
// controller, or the pod itself.
func owner(pod *corev1.Pod) (kind, name string) {
	for _, ref := range pod.OwnerReferences {
		if ref.Controller == nil || !*ref.Controller {
			continue
		}
		if h := pod.Labels["pod-template-hash"]; ref.Kind == "ReplicaSet" && strings.HasSuffix(ref.Name, "-"+h) {
			return "Deployment", strings.TrimSuffix(ref.Name, "-"+h)
		}
		return ref.Kind, ref.Name
	}
	return "Pod", pod.Name
}
