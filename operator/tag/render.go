package tag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// canonical is what a tag takes from its revision's own injector: where the injector is
// served and how, and its labels and annotations.
type canonical struct {
	name                                                  string
	labels, annotations                                   map[string]string
	url, caBundle, path, service, serviceNS, reinvocation string
	// caBundleByController says istiod wrote the bundle: it writes the tag's webhooks too, so
	// an apply leaves the bundle out (a copy would make each re-install write the tag again);
	// printed objects (tag generate) carry it, as upstream's do.
	caBundleByController bool
}

// copyCABundle says whether the tag's webhooks take the injector's CA bundle.
func (c *canonical) copyCABundle(opts Options) bool {
	return c.caBundle != "" && (opts.Generate || !c.caBundleByController)
}

// canonicalOf picks the revision's injector among hooks (the one serving from the istio
// namespace when there are several) and reads it.
func canonicalOf(hooks []unstructured.Unstructured, ns, rev string) (*canonical, error) {
	var picked []*canonical
	for i := range hooks {
		c, ok := readCanonical(&hooks[i])
		if !ok {
			continue
		}
		picked = append(picked, c)
	}
	if len(picked) > 1 {
		var here []*canonical
		for _, c := range picked {
			if c.url != "" || c.serviceNS == ns {
				here = append(here, c)
			}
		}
		picked = here
	}
	switch len(picked) {
	case 0:
		return nil, fmt.Errorf("cannot modify tag: revision %q has no sidecar injector MutatingWebhookConfiguration (was it installed with values.global.operatorManageWebhooks=true?)", rev)
	case 1:
		return picked[0], nil
	}
	var names []string
	for _, c := range picked {
		names = append(names, c.name)
	}
	return nil, fmt.Errorf("cannot modify tag: found multiple canonical webhooks with revision %q: %s", rev, strings.Join(names, ", "))
}

func readCanonical(w *unstructured.Unstructured) (*canonical, bool) {
	hooks, _, _ := unstructured.NestedSlice(w.Object, "webhooks")
	// Whether a controller (istiod) wrote the CA bundle, rather than the install.
	own, _ := kube.Yield(w, w.GetManagedFields(), ownership.FieldManager, ownership.ControllerFields)
	ownHooks, _, _ := unstructured.NestedSlice(own.Object, "webhooks")
	for _, h := range hooks {
		m, _ := h.(map[string]any)
		if name, _ := m["name"].(string); !strings.HasSuffix(name, injectorSuffix) {
			continue
		}
		c := &canonical{name: w.GetName(), labels: map[string]string{}, annotations: map[string]string{}}
		for k, v := range w.GetLabels() {
			if k != "app" {
				c.labels[k] = v
			}
		}
		for k, v := range w.GetAnnotations() {
			if k != kube.HashAnnotation && k != "kubectl.kubernetes.io/last-applied-configuration" {
				c.annotations[k] = v
			}
		}
		c.url, _, _ = unstructured.NestedString(m, "clientConfig", "url")
		c.caBundle, _, _ = unstructured.NestedString(m, "clientConfig", "caBundle")
		for _, oh := range ownHooks {
			if om, _ := oh.(map[string]any); om["name"] == m["name"] {
				if _, ours, _ := unstructured.NestedString(om, "clientConfig", "caBundle"); !ours {
					c.caBundleByController = c.caBundle != ""
				}
			}
		}
		c.path, _, _ = unstructured.NestedString(m, "clientConfig", "service", "path")
		c.service, _, _ = unstructured.NestedString(m, "clientConfig", "service", "name")
		c.serviceNS, _, _ = unstructured.NestedString(m, "clientConfig", "service", "namespace")
		c.reinvocation, _ = m["reinvocationPolicy"].(string)
		return c, true
	}
	return nil, false
}

// renderTag renders the tag's objects with the charts, as an install of the revision with
// values.revisionTags=[tag] (and, for the default tag, values.defaultRevision) would, and
// makes them call the revision's injector as it is installed.
func renderTag(opts Options, rev string, canon *canonical) ([]*unstructured.Unstructured, error) {
	mwc, vwc, svc, err := renderCharts(opts, rev, canon)
	if err != nil {
		return nil, err
	}
	out := []*unstructured.Unstructured{injector(opts, mwc, canon)}
	if vwc != nil {
		out = append(out, validator(opts, vwc, canon))
	}
	svc = svc.DeepCopy()
	svc.SetLabels(labelsFor(opts, svc.GetLabels(), nil))
	return append(out, svc), nil
}

// tagSpec is the IstioOperator document whose render holds the tag's objects.
func tagSpec(opts Options, rev string, canon *canonical) ([]byte, error) {
	values := map[string]any{
		"revisionTags": []any{opts.Tag},
		"global":       map[string]any{"istioNamespace": opts.IstioNamespace},
		"sidecarInjectorWebhook": map[string]any{
			"enableNamespacesByDefault": opts.AutoInjectNamespaces,
		},
	}
	if canon.reinvocation != "" {
		values["sidecarInjectorWebhook"].(map[string]any)["reinvocationPolicy"] = canon.reinvocation
	}
	if canon.url != "" {
		values["istiodRemote"] = map[string]any{"injectionURL": canon.url}
	}
	components := map[string]any{"pilot": map[string]any{"enabled": true}}
	if opts.Tag == Default {
		components["base"] = map[string]any{"enabled": true}
		values["defaultRevision"] = rev
		if canon.url != "" {
			if u, err := url.Parse(canon.url); err == nil {
				u.Path = "/validate"
				values["base"] = map[string]any{"validationURL": u.String()}
			}
		}
	}
	specTree := map[string]any{"profile": "empty", "components": components, "values": values}
	if rev != Default {
		specTree["revision"] = rev
	}
	return json.Marshal(map[string]any{
		"apiVersion": "install.istio.io/v1alpha1", "kind": "IstioOperator",
		"metadata": map[string]any{"namespace": opts.IstioNamespace},
		"spec":     specTree,
	})
}

// renderCharts renders the tag's spec and picks its injector, its Service and (default tag)
// the validator out of the render.
func renderCharts(opts Options, rev string, canon *canonical) (mwc, vwc, svc *unstructured.Unstructured, err error) {
	doc, err := tagSpec(opts, rev, canon)
	if err != nil {
		return nil, nil, nil, err
	}
	res, err := spec.Resolve(spec.Options{Files: []string{"-"}, Stdin: bytes.NewReader(doc), ManifestsDir: opts.ManifestsDir})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("rendering revision tag %q: %w", opts.Tag, err)
	}
	r, err := render.NewRenderer(res.IOP.Spec.InstallPackagePath)
	if err != nil {
		return nil, nil, nil, err
	}
	r.LazyCRDs = true // only the webhooks and the Service are used
	manifests, _, err := r.Render(res, component.Pilot, component.Base)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("rendering revision tag %q: %w", opts.Tag, err)
	}
	for _, m := range manifests {
		for _, o := range m.Objects {
			switch {
			case o.GetKind() == "MutatingWebhookConfiguration" && o.GetLabels()[LabelTag] == opts.Tag:
				mwc = o
			case o.GetKind() == "Service" && o.GetLabels()[LabelTag] == opts.Tag:
				svc = o
			case o.GetKind() == "ValidatingWebhookConfiguration" && o.GetName() == DefaultValidator:
				vwc = o
			}
		}
	}
	if mwc == nil || svc == nil || (opts.Tag == Default && vwc == nil) {
		return nil, nil, nil, fmt.Errorf("rendering revision tag %q: the charts rendered no tag webhook or Service (do the charts in %s support values.revisionTags?)", opts.Tag, chartsOrigin(opts.ManifestsDir))
	}
	return mwc, vwc, svc, nil
}

// injector is the tag's MutatingWebhookConfiguration, calling the revision's injector as
// installed (its CA bundle, path and Service) under the tag's name and labels.
func injector(opts Options, mwc *unstructured.Unstructured, canon *canonical) *unstructured.Unstructured {
	mwc = mwc.DeepCopy()
	eachHook(mwc, func(m map[string]any) {
		if canon.copyCABundle(opts) {
			_ = unstructured.SetNestedField(m, canon.caBundle, "clientConfig", "caBundle")
		}
		if _, ok, _ := unstructured.NestedMap(m, "clientConfig", "service"); ok {
			if canon.path != "" {
				_ = unstructured.SetNestedField(m, canon.path, "clientConfig", "service", "path")
			}
			if canon.service != "" {
				_ = unstructured.SetNestedField(m, canon.service, "clientConfig", "service", "name")
			}
		}
	})
	if opts.WebhookName != "" {
		mwc.SetName(opts.WebhookName)
	}
	mwc.SetLabels(labelsFor(opts, mwc.GetLabels(), canon.labels))
	if ann := merged(mwc.GetAnnotations(), canon.annotations); len(ann) > 0 {
		mwc.SetAnnotations(ann)
	}
	return mwc
}

// validator is the default tag's ValidatingWebhookConfiguration, with the injector's CA
// bundle. The failure policy stays as rendered: once istiod has switched it to Fail it is
// istiod's, and the apply leaves it alone (kube.Yield); copying the live value would make
// each re-install write the object again.
func validator(opts Options, vwc *unstructured.Unstructured, canon *canonical) *unstructured.Unstructured {
	vwc = vwc.DeepCopy()
	eachHook(vwc, func(m map[string]any) {
		if canon.copyCABundle(opts) {
			_ = unstructured.SetNestedField(m, canon.caBundle, "clientConfig", "caBundle")
		}
	})
	l := vwc.GetLabels()
	l[LabelTag] = opts.Tag
	vwc.SetLabels(labelsFor(opts, l, canon.labels))
	return vwc
}

// eachHook changes every webhook of a webhook configuration in place.
func eachHook(wh *unstructured.Unstructured, change func(map[string]any)) {
	hooks, _, _ := unstructured.NestedSlice(wh.Object, "webhooks")
	for i, h := range hooks {
		m := h.(map[string]any)
		change(m)
		hooks[i] = m
	}
	_ = unstructured.SetNestedSlice(wh.Object, hooks, "webhooks")
}

// labelsFor merges rendered, canonical and the options' labels; a user-managed tag keeps
// none of the installer's.
func labelsFor(opts Options, rendered, canonical map[string]string) map[string]string {
	l := merged(merged(rendered, canonical), opts.Labels)
	if opts.UserManaged {
		for k := range l {
			if strings.Contains(k, "operator.istio.io") {
				delete(l, k)
			}
		}
	}
	return l
}

func merged(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func chartsOrigin(dir string) string {
	if dir == "" {
		return "the built-in charts"
	}
	return dir
}
