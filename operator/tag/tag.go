package tag

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// Labels, names and values revision tags use, as upstream.
const (
	LabelTag = "istio.io/tag"
	LabelRev = ownership.LabelRevision
	// Default is the tag that also serves istio-injection=enabled namespaces and validation.
	Default = "default"
	// DefaultValidator is the validating webhook configuration the default tag owns.
	DefaultValidator = "istiod-default-validator"
	// DeactivatedKey and DeactivatedValue make the selector upstream gives a deactivated
	// injector: no namespace or pod carries that label, so the webhook never matches.
	DeactivatedKey   = "istio.io/deactivated"
	DeactivatedValue = "never-match"
	// DeactivationManager is the field manager that deactivates injectors. It is not
	// ownership.FieldManager: that one owns the whole injector, and an apply of only its selectors
	// would drop the rest.
	DeactivationManager = "istioctl-revision-tag"
	// injectorSuffix ends the names of Istio's injection webhooks.
	injectorSuffix = "sidecar-injector.istio.io"
	// servicePrefix and webhookPrefix start a tag's object names.
	servicePrefix = "istiod-revision-tag-"
	webhookPrefix = "istio-revision-tag-"
)

// Options say which tag to generate, pointing where.
type Options struct {
	Tag string
	// Revision is the control plane revision the tag points at ("default" or "" for the
	// default revision).
	Revision       string
	IstioNamespace string
	// WebhookName renames the MutatingWebhookConfiguration.
	WebhookName string
	// ManifestsDir holds charts/ to render with instead of the built-in ones.
	ManifestsDir string
	// AutoInjectNamespaces makes the default tag inject every namespace without a label.
	AutoInjectNamespaces bool
	// Overwrite lets an existing tag be changed.
	Overwrite bool
	// Generate only prints the objects: the tag may share a revision's name (upstream
	// checks that only when applying) and no injector is deactivated.
	Generate bool
	// Labels go on every generated object (the install sets its ownership labels and the
	// not-pruned opt-out).
	Labels map[string]string
	// UserManaged drops the installer's labels (every key containing operator.istio.io)
	// from the objects, as upstream does for `tag set`: an install's prune and an uninstall
	// by labels never match them.
	UserManaged bool
	// Installing are the revision's injectors as an install renders them: an install's plan
	// foresees the tag from them while the revision does not run yet.
	Installing []*unstructured.Unstructured
}

// Plan is a generated tag, checked against the cluster: what to apply and what it changes.
type Plan struct {
	Options Options
	// Revision is the revision the tag points at ("default" for the default one).
	Revision string
	// Objects are the MutatingWebhookConfiguration, for the default tag the
	// ValidatingWebhookConfiguration, and the Service, in that order.
	Objects []*unstructured.Unstructured
	// Deactivate are the live injectors of the default revision the default tag takes over.
	Deactivate []*unstructured.Unstructured
	// Overlaps are the IST0139 results: pods the new webhook and another injector would
	// both inject.
	Overlaps []check.Result
	// Previous is the revision the tag pointed at before, "" when it did not exist.
	Previous string
}

// Validate checks a tag name: a DNS-1123 label short enough for the Service name.
func Validate(tag string) error {
	if tag == "" {
		return fmt.Errorf("a revision tag needs a name")
	}
	if errs := validation.IsDNS1123Label(tag); len(errs) > 0 {
		return fmt.Errorf("revision tag %q: %s", tag, strings.Join(errs, "; "))
	}
	if max := validation.DNS1035LabelMaxLength - len(servicePrefix); len(tag) > max {
		return fmt.Errorf("revision tag %q: at most %d characters (the Service %s<tag> must be a DNS label)", tag, max, servicePrefix)
	}
	return nil
}

// revName is the istio.io/rev value of a revision.
func revName(r string) string { return ownership.Rev(r) }

// Generate renders the tag's objects and checks them against the cluster. It refuses a
// tag named like an existing revision (unless Generate, or the tag is "default"), a
// revision without an injector or Service, and an existing tag without Overwrite. It
// writes nothing.
func Generate(ctx context.Context, c *kube.Client, opts Options) (*Plan, error) {
	if err := Validate(opts.Tag); err != nil {
		return nil, err
	}
	ns := opts.IstioNamespace
	rev := revName(opts.Revision)
	p := &Plan{Options: opts, Revision: rev}
	// One list of the injectors serves every question below.
	all, err := c.List(ctx, kube.MutatingWebhookGVK, "")
	if err != nil {
		return nil, err
	}

	if !opts.Generate && opts.Tag != Default {
		hooks, svcs, err := revisionObjects(ctx, c, all, ns, opts.Tag)
		if err != nil {
			return nil, err
		}
		if len(hooks) > 0 || len(svcs) > 0 {
			return nil, fmt.Errorf("cannot create revision tag %q: found existing control plane revision with same name", opts.Tag)
		}
	}

	hooks, svcs, err := revisionObjects(ctx, c, all, ns, rev)
	if err != nil {
		return nil, err
	}
	if len(hooks) == 0 {
		// An install that stopped before its webhooks left the Service alone: the injector
		// it is about to write stands in.
		for _, h := range opts.Installing {
			hooks = append(hooks, *h)
		}
	}
	if len(hooks) == 0 && len(svcs) == 0 {
		return nil, fmt.Errorf("cannot modify tag: cannot find MutatingWebhookConfiguration or Service with revision %q", rev)
	}
	canon, err := canonicalOf(hooks, ns, rev)
	if err != nil {
		return nil, err
	}

	existing, err := matching(all, LabelTag+"="+opts.Tag)
	if err != nil {
		return nil, err
	}
	existingSvcs, err := listIn(ctx, c, kube.ServiceGVK, ns, LabelTag+"="+opts.Tag)
	if err != nil {
		return nil, err
	}
	if (len(existing) > 0 || len(existingSvcs) > 0) && !opts.Overwrite {
		return nil, fmt.Errorf("revision tag %q already exists, and --overwrite is false", opts.Tag)
	}
	for _, o := range append(existing, existingSvcs...) {
		if r := o.GetLabels()[LabelRev]; r != "" {
			p.Previous = r
			break
		}
	}

	if p.Objects, err = renderTag(opts, rev, canon); err != nil {
		return nil, err
	}

	replaced := map[string]bool{}
	if opts.Tag == Default && !opts.Generate {
		for i := range all {
			if w := &all[i]; isDefaultInjector(w) && !Deactivated(w) {
				w.SetGroupVersionKind(kube.MutatingWebhookGVK)
				p.Deactivate = append(p.Deactivate, w)
				replaced[w.GetName()] = true
			}
		}
	}
	// The tag's webhook replaces the tag's old one, whatever its name was.
	for _, w := range existing {
		replaced[w.GetName()] = true
	}
	var others []unstructured.Unstructured
	for _, w := range all {
		if !replaced[w.GetName()] {
			others = append(others, w)
		}
	}
	if p.Overlaps, err = check.InjectorOverlaps(p.Objects[0], others); err != nil {
		return nil, err
	}
	return p, nil
}

// revisionObjects picks a revision's own injectors (not tags) from hooks and lists its
// istiod Services.
func revisionObjects(ctx context.Context, c *kube.Client, hooks []unstructured.Unstructured, ns, rev string) ([]unstructured.Unstructured, []unstructured.Unstructured, error) {
	own, err := matching(hooks, fmt.Sprintf("%s=%s,!%s", LabelRev, rev, LabelTag))
	if err != nil {
		return nil, nil, err
	}
	svcs, err := listIn(ctx, c, kube.ServiceGVK, ns, fmt.Sprintf("app=istiod,%s=%s,!%s", LabelRev, rev, LabelTag))
	return own, svcs, err
}

// matching are the items not being deleted whose labels match selector.
func matching(items []unstructured.Unstructured, selector string) ([]unstructured.Unstructured, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("label selector %q: %w", selector, err)
	}
	var out []unstructured.Unstructured
	for _, it := range alive(items) {
		if sel.Matches(labels.Set(it.GetLabels())) {
			out = append(out, it)
		}
	}
	return out, nil
}

// alive leaves out objects being deleted.
func alive(items []unstructured.Unstructured) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for _, it := range items {
		if it.GetDeletionTimestamp() == nil {
			out = append(out, it)
		}
	}
	return out
}

// listIn lists objects of a namespaced kind in one namespace.
func listIn(ctx context.Context, c *kube.Client, gvk schema.GroupVersionKind, ns, selector string) ([]unstructured.Unstructured, error) {
	items, err := c.ListIn(ctx, gvk, ns, selector)
	if err != nil {
		return nil, err
	}
	var out []unstructured.Unstructured
	for _, it := range items {
		if it.GetDeletionTimestamp() == nil {
			it.SetGroupVersionKind(gvk)
			out = append(out, it)
		}
	}
	return out, nil
}

// isDefaultInjector says w is the default revision's own injector (not a tag's).
func isDefaultInjector(w *unstructured.Unstructured) bool {
	l := w.GetLabels()
	_, tagged := l[LabelTag]
	return l[LabelRev] == Default && !tagged
}

// Deactivated says every webhook of w has upstream's never-match selectors.
func Deactivated(w *unstructured.Unstructured) bool {
	hooks, _, _ := unstructured.NestedSlice(w.Object, "webhooks")
	if len(hooks) == 0 {
		return false
	}
	for _, h := range hooks {
		m, _ := h.(map[string]any)
		for _, sel := range []string{"namespaceSelector", "objectSelector"} {
			v, _, _ := unstructured.NestedString(m, sel, "matchLabels", DeactivatedKey)
			if v != DeactivatedValue {
				return false
			}
		}
	}
	return true
}

// neverMatch is the selector of a deactivated webhook.
func neverMatch() map[string]any {
	return map[string]any{"matchLabels": map[string]any{DeactivatedKey: DeactivatedValue}}
}

// Deactivate sets, in place, upstream's never-match namespace and object selectors on
// every webhook of w.
func Deactivate(w *unstructured.Unstructured) {
	hooks, _, _ := unstructured.NestedSlice(w.Object, "webhooks")
	for i, h := range hooks {
		m, _ := h.(map[string]any)
		m["namespaceSelector"] = neverMatch()
		m["objectSelector"] = neverMatch()
		hooks[i] = m
	}
	_ = unstructured.SetNestedSlice(w.Object, hooks, "webhooks")
}
