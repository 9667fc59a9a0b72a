package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// CodeInjectorOverlap is upstream's message code for injectors that overlap.
const CodeInjectorOverlap = "IST0139"

// InjectorOverlaps says whether the sidecar injectors of mwc would inject pods another
// Istio injector among others injects too (IST0139, as upstream's webhook analyzer): it
// tries every combination of the labels Istio injection keys on — a namespace with no
// label, istio-injection=enabled or disabled, each with and without istio.io/rev=<r>; a pod
// with no label, sidecar.istio.io/inject=true or false, each with and without
// istio.io/rev=<r>, for every revision r the injectors name — and reports, once per
// webhook of mwc, each one that selects a pod another webhook selects as well.
//
// others holds the cluster's MutatingWebhookConfigurations; the one named like mwc is
// left out (mwc replaces it), and so are those that are not Istio's.
func InjectorOverlaps(mwc *unstructured.Unstructured, others []unstructured.Unstructured) ([]Result, error) {
	own, err := typedMWC(mwc)
	if err != nil {
		return nil, err
	}
	type hook struct {
		config string
		wh     admissionv1.MutatingWebhook
	}
	var all []hook
	revs := map[string]bool{}
	add := func(c *admissionv1.MutatingWebhookConfiguration) {
		for _, r := range revisionsOf(c) {
			revs[r] = true
		}
		for _, wh := range c.Webhooks {
			all = append(all, hook{c.Name, wh})
		}
	}
	add(own)
	for i := range others {
		if others[i].GetName() == mwc.GetName() {
			continue
		}
		o, err := typedMWC(&others[i])
		if err != nil {
			return nil, err
		}
		if len(revisionsOf(o)) == 0 && !istioWebhook(o) {
			continue
		}
		add(o)
	}
	var revList []string
	for r := range revs {
		revList = append(revList, r)
	}
	sort.Strings(revList)
	nsLabels := labelSets("istio-injection", "enabled", "disabled", revList)
	podLabels := labelSets("sidecar.istio.io/inject", "true", "false", revList)

	// overlapping[webhook of mwc] = the other webhooks that select one of its pods.
	overlapping := map[string]map[string]bool{}
	for _, nl := range nsLabels {
		for _, pl := range podLabels {
			var matched []int
			for i, h := range all {
				if selects(h.wh.NamespaceSelector, nl) && selects(h.wh.ObjectSelector, pl) {
					matched = append(matched, i)
				}
			}
			if len(matched) < 2 {
				continue
			}
			for _, m := range matched {
				if all[m].config != own.Name {
					continue
				}
				set := overlapping[all[m].wh.Name]
				if set == nil {
					set = map[string]bool{}
					overlapping[all[m].wh.Name] = set
				}
				for _, o := range matched {
					if o != m {
						set[all[o].config+"/"+all[o].wh.Name] = true
					}
				}
			}
		}
	}
	var out []Result
	for _, wh := range own.Webhooks {
		set := overlapping[wh.Name]
		if len(set) == 0 {
			continue
		}
		var names []string
		for n := range set {
			names = append(names, n)
		}
		sort.Strings(names)
		out = append(out, Result{
			Check: "injector-overlap", Section: SectionExisting, Severity: Error, Code: CodeInjectorOverlap,
			Object:  ref.New("MutatingWebhookConfiguration", "", own.Name).String(),
			Message: fmt.Sprintf("Webhook %s overlaps with others: [%s]. This may cause injection to occur twice.", wh.Name, strings.Join(names, " ")),
		})
	}
	return out, nil
}

func typedMWC(u *unstructured.Unstructured) (*admissionv1.MutatingWebhookConfiguration, error) {
	var c admissionv1.MutatingWebhookConfiguration
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &c); err != nil {
		return nil, fmt.Errorf("reading MutatingWebhookConfiguration %s: %w", u.GetName(), err)
	}
	return &c, nil
}

// labelSets are the label combinations tried: none, key=on, key=off, and each of them with
// istio.io/rev=<r> for every revision r.
func labelSets(key, on, off string, revs []string) []labels.Set {
	base := []labels.Set{{}, {key: on}, {key: off}}
	out := append([]labels.Set{}, base...)
	for _, r := range revs {
		for _, b := range base {
			s := labels.Set{ownership.LabelRevision: r}
			for k, v := range b {
				s[k] = v
			}
			out = append(out, s)
		}
	}
	return out
}

// selects applies a webhook selector; an absent selector matches everything.
func selects(sel *metav1.LabelSelector, l labels.Set) bool {
	if sel == nil {
		return true
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(l)
}

// revisionsOf lists the revisions a webhook configuration is labelled for or selects.
func revisionsOf(c *admissionv1.MutatingWebhookConfiguration) []string {
	set := map[string]bool{}
	if r, ok := c.Labels[ownership.LabelRevision]; ok {
		set[r] = true
	}
	for _, wh := range c.Webhooks {
		for _, sel := range []*metav1.LabelSelector{wh.NamespaceSelector, wh.ObjectSelector} {
			if sel == nil {
				continue
			}
			if r, ok := sel.MatchLabels[ownership.LabelRevision]; ok {
				set[r] = true
			}
			for _, e := range sel.MatchExpressions {
				if e.Key == ownership.LabelRevision {
					for _, v := range e.Values {
						set[v] = true
					}
				}
			}
		}
	}
	var out []string
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

func istioWebhook(c *admissionv1.MutatingWebhookConfiguration) bool {
	for _, wh := range c.Webhooks {
		if strings.HasSuffix(wh.Name, "istio.io") {
			return true
		}
	}
	return false
}
