package check

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"istio.io/api/annotation"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// SectionUpgrade holds the --from-version notes.
const SectionUpgrade = "Upgrade notes"

// injectorOverlap finds sidecar injectors, not installed by this install, that already
// inject the namespaces the default revision's injector would (istio-injection=enabled):
// two injectors on one namespace make every pod creation conflict.
func injectorOverlap(ctx context.Context, env *Env) []Result {
	rev := ownership.Rev(env.Revision)
	if env.Manifests != nil && !rendersInjector(env) {
		// An install relying on an existing control plane (gateways only) injects nothing.
		return []Result{{Object: "(Cluster)", Passed: true, Message: "this install renders no sidecar injector"}}
	}
	list, err := env.Client.List(ctx, kube.MutatingWebhookGVK, "app=sidecar-injector")
	if err != nil {
		return notChecked(err)
	}
	var out []Result
	for i := range list {
		w := &list[i]
		l := w.GetLabels()
		ours := l[ownership.LabelOwnerNamespace] == env.IstioNamespace && l[ownership.LabelRevision] == rev
		r := Result{Object: ref.New("MutatingWebhookConfiguration", "", w.GetName()).String(), Passed: true,
			Message: fmt.Sprintf("injector of revision %q", l[ownership.LabelRevision])}
		if rev == ownership.DefaultRevision && l["istio.io/tag"] == "default" {
			// An install of the default revision points the default tag at itself.
			r.Message = fmt.Sprintf("the default revision tag (now revision %q): this install takes it over", l[ownership.LabelRevision])
			out = append(out, r)
			continue
		}
		if !ours && rev == ownership.DefaultRevision && injectsDefaultNamespaces(w) && !strings.Contains(w.GetName(), "deactivated") {
			r.Passed = false
			r.Message = fmt.Sprintf("already injects namespaces labelled istio-injection=enabled (revision %q): creating default injection would conflict", l[ownership.LabelRevision])
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		out = append(out, Result{Object: "(Cluster)", Passed: true, Message: "no sidecar injector installed"})
	}
	return out
}

func rendersInjector(env *Env) bool {
	for _, o := range env.Expected() {
		if o.GetKind() == "MutatingWebhookConfiguration" && o.GetLabels()["app"] == "sidecar-injector" {
			return true
		}
	}
	return false
}

func injectsDefaultNamespaces(w *unstructured.Unstructured) bool {
	hooks, _, _ := unstructured.NestedSlice(w.Object, "webhooks")
	for _, h := range hooks {
		m, _ := h.(map[string]any)
		sel, _, _ := unstructured.NestedMap(m, "namespaceSelector")
		if labels, ok := sel["matchLabels"].(map[string]any); ok && labels["istio-injection"] == "enabled" {
			return true
		}
		exprs, _ := sel["matchExpressions"].([]any)
		for _, e := range exprs {
			em, _ := e.(map[string]any)
			vals, _ := em["values"].([]any)
			if em["key"] == "istio-injection" && em["operator"] == "In" {
				for _, v := range vals {
					if v == "enabled" {
						return true
					}
				}
			}
		}
	}
	return false
}

// alphaAnnotations reports Istio annotations whose feature status is alpha on namespaces,
// services, deployments and pods. It reads metadata only, a page at a time, the four kinds
// at once: linear in the cluster's size with memory bounded by a page (a list of whole
// pods held 430 MiB at 10,000 pods; docs/benchmarks-scale.md).
func alphaAnnotations(ctx context.Context, env *Env) []Result {
	alpha := map[string]bool{}
	for _, a := range annotation.AllResourceAnnotations() {
		if a.FeatureStatus == annotation.Alpha && !a.Hidden && !a.Deprecated {
			alpha[a.Name] = true
		}
	}
	kinds := []schema.GroupVersionKind{
		{Version: "v1", Kind: "Namespace"}, {Version: "v1", Kind: "Service"},
		{Group: "apps", Version: "v1", Kind: "Deployment"}, {Version: "v1", Kind: "Pod"},
	}
	found := make([][]Result, len(kinds))
	errs := make([]error, len(kinds))
	var wg sync.WaitGroup
	for i, gvk := range kinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = env.Client.EachMeta(ctx, gvk, "", func(it *metav1.PartialObjectMetadata) {
				var used []string
				for k := range it.Annotations {
					if alpha[k] && !setByIstio(k, gvk.Kind, it.Annotations) {
						used = append(used, k)
					}
				}
				if len(used) == 0 {
					return
				}
				sort.Strings(used)
				obj := ref.New(gvk.Kind, it.Namespace, it.Name).String()
				found[i] = append(found[i], Result{Object: obj, Message: "uses alpha annotation(s) " + strings.Join(used, ", ")})
			})
		}()
	}
	wg.Wait()
	var out []Result
	for i := range kinds {
		if errs[i] != nil {
			return notChecked(errs[i])
		}
		out = append(out, found[i]...)
	}
	if len(out) == 0 {
		out = append(out, Result{Object: "(Cluster)", Passed: true, Message: "no alpha annotation in use"})
	}
	return out
}

// notChecked turns a read the user may not make into a note rather than a failure: the
// permissions check already reports what the user lacks.
func notChecked(err error) []Result {
	if apierrors.IsForbidden(err) || strings.Contains(err.Error(), "permission denied") {
		return []Result{{Object: "(Cluster)", Passed: true, Severity: Info, Message: "not checked: " + err.Error()}}
	}
	return []Result{{Object: "(Cluster)", Message: err.Error()}}
}

// upgradeNotes: coming from 1.21 or older, a zipkin Service in the istio namespace means
// tracing was relying on a default that changed.
func upgradeNotes(ctx context.Context, env *Env) []Result {
	if env.FromVersion == "" {
		return nil
	}
	from, err := utilversion.ParseGeneric(env.FromVersion)
	if err != nil {
		return []Result{{Object: "(Cluster)", Message: fmt.Sprintf("--from-version %q: want a version like 1.21", env.FromVersion)}}
	}
	if from.AtLeast(utilversion.MustParseGeneric("1.22")) {
		return []Result{{Object: "(Cluster)", Passed: true, Message: "no behaviour change to note since " + env.FromVersion}}
	}
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(kube.ServiceGVK)
	o.SetNamespace(env.IstioNamespace)
	o.SetName("zipkin")
	live, err := env.Client.Get(ctx, o)
	if err != nil {
		return []Result{{Object: "(Cluster)", Message: err.Error()}}
	}
	if live == nil {
		return []Result{{Object: "(Cluster)", Passed: true, Message: "no zipkin Service: the tracing default change does not matter here"}}
	}
	return []Result{{Object: ref.New("Service", env.IstioNamespace, "zipkin").String(),
		Message: "tracing no longer defaults to zipkin since 1.22: configure a tracing provider in meshConfig.extensionProviders"}}
}

// setByIstio says whether an alpha annotation is one istiod or the injector writes, which
// upstream's analyzer does not report: always (the revision, the injection status, the
// gateway controller's version), and the interception annotations on a pod unless it
// redirects with an istio-init container (with CNI the injector sets them by default). The
// injection status names the init containers, so the pod's metadata is enough.
func setByIstio(name, kind string, annotations map[string]string) bool {
	switch name {
	case annotation.IoIstioRev.Name, annotation.SidecarStatus.Name, annotation.GatewayControllerVersion.Name:
		return true
	case annotation.SidecarInterceptionMode.Name, annotation.SidecarTrafficIncludeInboundPorts.Name,
		annotation.SidecarTrafficExcludeInboundPorts.Name, annotation.SidecarTrafficIncludeOutboundIPRanges.Name:
		if kind != "Pod" {
			return false
		}
		var status struct {
			InitContainers []string `json:"initContainers"`
		}
		_ = json.Unmarshal([]byte(annotations[annotation.SidecarStatus.Name]), &status)
		return !slices.Contains(status.InitContainers, "istio-init")
	}
	return false
}
