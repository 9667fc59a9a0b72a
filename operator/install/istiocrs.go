package install

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/readiness"
)

// istioCRs are the objects of Istio's own kinds (networking.istio.io, ...): the east-west
// gateway's expose objects.
func istioCRs(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if strings.HasSuffix(o.GroupVersionKind().Group, ".istio.io") {
			out = append(out, o)
		}
	}
	return out
}

// istioCRPoll is how often the wait for the control plane re-reads it.
const istioCRPoll = 500 * time.Millisecond

// waitControlPlane holds back Istio CRs until their CRDs are established and the istiod of
// their revision serves its validation webhook (its Deployment ready, when this cluster runs
// one): an install of its own (the eastwest profile) has no Base or Pilot parent that the
// graph would wait for, and a CR applied earlier either fails (no kind) or skips validation.
func (in *pass) waitControlPlane(ctx context.Context, crs []*unstructured.Unstructured, ev event.Event) error {
	if len(crs) == 0 || in.Opts.DryRun {
		return nil
	}
	waiting := false
	for {
		why, err := in.controlPlaneNotReady(ctx, crs)
		if err != nil || why == "" {
			return err
		}
		if !waiting {
			waiting = true
			e := ev
			e.Type, e.Message = event.Waiting, why
			in.events.Emit(e)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s before the Istio objects could be applied: %s; install the control plane first (istioctl install)", stopped(ctx), why)
		case <-time.After(istioCRPoll):
		}
	}
}

// controlPlaneNotReady says what the Istio CRs still wait for ("" for nothing).
func (in *Installer) controlPlaneNotReady(ctx context.Context, crs []*unstructured.Unstructured) (string, error) {
	seen := map[schema.GroupKind]bool{}
	for _, o := range crs {
		gk := o.GroupVersionKind().GroupKind()
		if seen[gk] {
			continue
		}
		seen[gk] = true
		_, m, err := in.Client.Resource(o.GroupVersionKind(), o.GetNamespace())
		if err != nil {
			return fmt.Sprintf("the kind %s is not served yet (%v)", gk, err), nil
		}
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(kube.CRDGVK)
		crd.SetName(m.Resource.Resource + "." + gk.Group)
		live, err := in.Client.Get(ctx, crd)
		if err != nil {
			return "", err
		}
		if live == nil || readiness.Check(live).Status != readiness.Ready {
			return fmt.Sprintf("CustomResourceDefinition %s is not established", crd.GetName()), nil
		}
	}
	rev := crs[0].GetLabels()[ownership.LabelRevision]
	name := "istiod"
	if rev != "" && rev != ownership.DefaultRevision {
		name += "-" + rev
	}
	ns := crs[0].GetNamespace()
	d := &unstructured.Unstructured{}
	d.SetAPIVersion("apps/v1")
	d.SetKind("Deployment")
	d.SetNamespace(ns)
	d.SetName(name)
	live, err := in.Client.Get(ctx, d)
	if err != nil || live == nil {
		// No istiod here (a remote's config comes from elsewhere): nothing to wait for.
		return "", err
	}
	if r := readiness.Check(live); r.Status != readiness.Ready {
		return fmt.Sprintf("Deployment %s/%s, which serves the validation webhook, is not ready: %s", ns, name, r.Message), nil
	}
	return "", nil
}
