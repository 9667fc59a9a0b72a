package admission

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/readiness"
)

// Outcome is what admission said of one object the install creates.
type Outcome struct {
	// Object is Kind/namespace/name, or "Pod of Kind/namespace/name" for a workload's pods.
	Object string
	// Refusal is nil when the object was admitted.
	Refusal *readiness.Refusal
	// Note says how it was asked when not as the install will (another ServiceAccount,
	// another namespace, checked locally), or why it was not.
	Note string
	// Unasked says it could not be asked and need not be: an object of a kind whose CRD
	// the install itself creates first.
	Unasked bool
}

// Survey asks the apiserver, by server-side dry runs, whether it admits objs (a rendered
// install) and a pod built from each of their workloads' templates. Nothing is written.
//
// A namespace the install creates (absent now) is dry-run created; nothing can be dry-run
// inside it, since the apiserver admits nothing into a namespace that does not exist. Its
// workloads' pods are then checked as far as they can be: Pod Security locally, with the
// library the apiserver runs, at the level the namespace would get (its labels as
// admission returned them); policies and webhooks by a dry run in the namespace
// "default" (quotas and LimitRanges cannot exist in a namespace that does not). A pod
// whose ServiceAccount the install has not created yet is asked as the namespace's
// "default" ServiceAccount.
func Survey(ctx context.Context, c *kube.Client, objs []*unstructured.Unstructured) ([]Outcome, error) {
	s := &survey{c: quiet(c), absent: map[string]*unstructured.Unstructured{}, rendered: map[string]bool{}, renderedKinds: map[string]bool{}}
	var namespaces []string
	seen := map[string]bool{}
	for _, o := range objs {
		s.rendered[ref.Of(o).String()] = true
		if o.GetKind() == "CustomResourceDefinition" {
			g, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			k, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
			s.renderedKinds[g+"/"+k] = true
		}
		if ns := o.GetNamespace(); ns != "" && !seen[ns] {
			seen[ns] = true
			namespaces = append(namespaces, ns)
		}
	}
	sort.Strings(namespaces)
	if len(s.renderedKinds) > 0 {
		var err error
		if s.crdsJudged, err = judgesCRDs(ctx, s.c); err != nil {
			return nil, err
		}
	}
	var out []Outcome
	for _, ns := range namespaces {
		o, absent, err := s.namespace(ctx, ns)
		if err != nil {
			return nil, err
		}
		if absent {
			out = append(out, o)
		}
	}
	results := make([][]Outcome, len(objs))
	errs := make([]error, len(objs))
	var g errgroup.Group
	g.SetLimit(concurrency)
	for i, o := range objs {
		g.Go(func() error {
			results[i], errs[i] = s.object(ctx, o)
			return nil
		})
	}
	_ = g.Wait() // each object's error is kept in errs
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, r := range results {
		out = append(out, r...)
	}
	return out, nil
}

// concurrency bounds the dry runs in flight.
const concurrency = 8

type survey struct {
	c *kube.Client
	// absent maps each namespace the install creates to the Namespace admission
	// returned from its dry-run create.
	absent map[string]*unstructured.Unstructured
	// rendered holds kube.Describe of every rendered object; renderedKinds group/Kind of
	// every rendered CRD.
	rendered, renderedKinds map[string]bool
	// crdsJudged says a policy or webhook of the cluster judges CRDs (judgesCRDs).
	crdsJudged bool
}

// NotJudged is the note of a CRD not asked: nothing but the apiserver's own validation
// judges it.
const NotJudged = "not asked: no admission policy or webhook judges CRDs"

// namespace reads ns; when absent, dry-runs its creation (outcome returned, absent true).
func (s *survey) namespace(ctx context.Context, name string) (Outcome, bool, error) {
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(kube.NamespaceGVK)
	ns.SetName(name)
	live, err := s.c.Get(ctx, ns)
	if err != nil {
		return Outcome{}, false, err
	}
	if live != nil {
		return Outcome{}, false, nil
	}
	out := Outcome{Object: ref.New("Namespace", "", name).String(), Note: "does not exist yet: the install creates it"}
	ri, _, err := s.c.Resource(kube.NamespaceGVK, "")
	if err != nil {
		return Outcome{}, false, err
	}
	got, err := ri.Create(ctx, ns, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if out.Refusal, err = refusal(err, false); err != nil {
		return Outcome{}, false, err
	}
	if got == nil {
		got = ns
	}
	s.absent[name] = got
	return out, true, nil
}

// object dry-runs one rendered object (as the install applies it) and, for a workload,
// a pod of it.
func (s *survey) object(ctx context.Context, o *unstructured.Unstructured) ([]Outcome, error) {
	var out []Outcome
	nsObj, inAbsent := s.absent[o.GetNamespace()]
	gvk := o.GroupVersionKind()
	_, _, unserved := s.c.Resource(gvk, o.GetNamespace())
	switch {
	case gvk.GroupKind() == kube.CRDGVK.GroupKind() && !s.crdsJudged:
		out = append(out, Outcome{Object: ref.Of(o).String(), Unasked: true, Note: NotJudged})
	case unserved != nil && s.renderedKinds[gvk.Group+"/"+gvk.Kind]:
		out = append(out, Outcome{Object: ref.Of(o).String(), Unasked: true, Note: "not asked: the install creates its CRD first"})
	case !inAbsent:
		r, err := s.apply(ctx, o)
		if err != nil {
			return nil, err
		}
		out = append(out, Outcome{Object: ref.Of(o).String(), Refusal: r})
	}
	pod := PodFor(o)
	if pod == nil {
		return out, nil
	}
	what := "Pod of " + ref.Of(o).String()
	if inAbsent {
		return append(out, s.podsOfAbsent(ctx, what, pod, nsObj)...), nil
	}
	r, note, err := s.pod(ctx, pod)
	if err != nil {
		return nil, err
	}
	return append(out, Outcome{Object: what, Refusal: r, Note: note}), nil
}

// apply dry-runs the server-side apply the install would send.
func (s *survey) apply(ctx context.Context, o *unstructured.Unstructured) (*readiness.Refusal, error) {
	if _, _, err := s.c.Resource(o.GroupVersionKind(), o.GetNamespace()); err != nil {
		// A kind whose CRD the install creates: nothing can be asked before it exists.
		return &readiness.Refusal{Layer: readiness.Unknown, CannotCheck: true, Message: "its kind is not served yet (the install creates its CRD first)"}, nil
	}
	// The apply itself, without kube.Apply's read of the live object first: a dry run
	// needs no change summary, and one request per object is half the cost.
	ri, _, _ := s.c.Resource(o.GroupVersionKind(), o.GetNamespace())
	data, err := o.MarshalJSON()
	if err != nil {
		return nil, err
	}
	force := true
	_, err = ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
		FieldManager: ownership.FieldManager, Force: &force, DryRun: []string{metav1.DryRunAll}})
	return refusal(err, false)
}

// pod dry-runs pod in its namespace; a ServiceAccount the install creates but that does
// not exist yet is replaced by the namespace's default one (note says so).
func (s *survey) pod(ctx context.Context, pod *unstructured.Unstructured) (*readiness.Refusal, string, error) {
	r, err := DryRunPod(ctx, s.c, pod)
	if err != nil || r == nil || r.Layer != readiness.ServiceAccount {
		return r, "", err
	}
	sa, _, _ := unstructured.NestedString(pod.Object, "spec", "serviceAccountName")
	if !s.rendered[ref.New("ServiceAccount", pod.GetNamespace(), sa).String()] {
		return r, "", nil
	}
	note := fmt.Sprintf("asked as ServiceAccount default: ServiceAccount %s does not exist until the install creates it", sa)
	as := pod.DeepCopy()
	_ = unstructured.SetNestedField(as.Object, "default", "spec", "serviceAccountName")
	r, err = DryRunPod(ctx, s.c, as)
	return r, note, err
}

// podsOfAbsent checks the pods of a workload whose namespace does not exist yet: Pod
// Security locally at the level the namespace would get, policies and webhooks by a dry
// run in the namespace "default".
func (s *survey) podsOfAbsent(ctx context.Context, what string, pod, ns *unstructured.Unstructured) []Outcome {
	var out []Outcome
	ps, err := PodSecurity(pod, ns.GetLabels())
	if err != nil {
		ps = &readiness.Refusal{Layer: readiness.PodSecurity, CannotCheck: true, Message: err.Error()}
	}
	out = append(out, Outcome{Object: what, Refusal: ps,
		Note: fmt.Sprintf("Pod Security checked locally: namespace %s does not exist yet", ns.GetName())})
	proxy := pod.DeepCopy()
	proxy.SetNamespace(metav1.NamespaceDefault)
	_ = unstructured.SetNestedField(proxy.Object, "default", "spec", "serviceAccountName")
	r, err := DryRunPod(ctx, s.c, proxy)
	switch {
	case err != nil:
		r = &readiness.Refusal{Layer: readiness.Unknown, CannotCheck: true, Message: err.Error()}
	case r != nil && r.Layer != readiness.Policy && r.Layer != readiness.Webhook:
		// The namespace default's own Pod Security level, quotas and LimitRanges say
		// nothing of the namespace the install creates.
		r = nil
	}
	return append(out, Outcome{Object: what, Refusal: r,
		Note: fmt.Sprintf("policies and webhooks asked in namespace default, as ServiceAccount default: namespace %s does not exist yet", ns.GetName())})
}

// DryRunPod asks the apiserver to admit pod (a dry-run create): nil when it does, the
// refusal otherwise. An error is one that says nothing about admission (the cluster
// cannot be reached).
func DryRunPod(ctx context.Context, c *kube.Client, pod *unstructured.Unstructured) (*readiness.Refusal, error) {
	ri, _, err := c.Resource(kube.PodGVK, pod.GetNamespace())
	if err != nil {
		return nil, err
	}
	_, err = ri.Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return refusal(err, false)
}

// refusal turns a dry run's error into a refusal (nil error); an error that is not the
// apiserver's answer is returned as is.
func refusal(err error, oldPods bool) (*readiness.Refusal, error) {
	if err == nil {
		return nil, nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return nil, err
	}
	msg := status.Status().Message
	if msg == "" {
		msg = err.Error()
	}
	r := readiness.Classify(msg, oldPods)
	if r.Layer == readiness.Unknown && !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
		// Not a refusal: the apiserver could not answer (unavailable, a timeout).
		if apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
			r.CannotCheck = true
			return &r, nil
		}
		return nil, err
	}
	return &r, nil
}

// quiet is c asking without the apiserver's warnings: a dry-run apply of a workload into a
// namespace that enforces Pod Security warns of the pods it would refuse, which the
// survey reports itself. c when a quiet client cannot be made.
func quiet(c *kube.Client) *kube.Client {
	cfg := rest.CopyConfig(c.Config)
	cfg.WarningHandler = rest.NoWarnings{}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return c
	}
	q := *c
	q.Dynamic = dyn
	return &q
}
