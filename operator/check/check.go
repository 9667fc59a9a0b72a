// Package check holds the checks precheck and verify-install run, as data: an id, a
// section, a severity, a hint and a function that returns results naming the objects it
// looked at. Both commands are selections of one registry; the checks of a run execute
// concurrently and their results come back ordered most important first.
package check

import (
	"context"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/external"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/readiness"
	"github.com/istioctl-installer/istioctl/operator/render"
)

// Severity says how much a failed result matters.
type Severity string

// The severities.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Result is one outcome of a check, usually about one object.
type Result struct {
	Check    string   `json:"check"`
	Section  string   `json:"section"`
	Severity Severity `json:"severity"`
	// Code is upstream's message code (IST0141, ...) where one exists.
	Code   string `json:"code,omitempty"`
	Passed bool   `json:"passed"`
	// Object is Kind/namespace/name, or "(Cluster)".
	Object  string `json:"object"`
	Message string `json:"message"`
	// Diff shows drift: fields we set that differ in the cluster.
	Diff string `json:"diff,omitempty"`
	Hint string `json:"hint,omitempty"`
	// rank orders failures: the lower, the more important.
	rank int
}

// Check is one registered check (registry.go): its id, section, severity, hint, the page
// and anchor of docs/ that explain it, the selections it belongs to, and its function: of
// one cluster (Run), or of every cluster of a mesh (Cross).
type Check struct {
	ID, Title, Section string
	Severity           Severity
	Code               string
	Hint               string
	// Doc is the URL of the check's documentation (DocsURL, a page, an anchor).
	Doc string
	In  Selection
	Run func(ctx context.Context, env *Env) []Result
	// Cross is the function of a cross-cluster check (RunCross), in place of Run.
	Cross func(clusters []ClusterFacts) []Result
}

// Env is what checks look at.
type Env struct {
	Client *kube.Client
	// IstioNamespace is where the control plane lives.
	IstioNamespace string
	Revision       string
	// Manifests is the rendered install (expected objects); nil when verifying from labels.
	Manifests []render.Manifest
	// Installed are the objects found by ownership labels, when verifying without a spec.
	Installed []*unstructured.Unstructured
	// Version is the Istio version the spec installs.
	Version string
	// FromVersion is precheck's --from-version: the release being upgraded from.
	FromVersion string
	// External is what the spec relies on but does not install (nil: nothing).
	External *external.Declaration
	// BaseCRDs names the CRDs Base installs, checked when the spec relies on Base.
	BaseCRDs []string

	// ClusterName is this cluster's values.global.multiCluster.clusterName when the spec
	// sets one; ManifestsDir the charts the link checks render the reader role from.
	ClusterName, ManifestsDir string

	// Hop, when set, is the one move the hop gate judges (install's in-place upgrade, the
	// revision upgrade's); precheck leaves it nil and judges every control plane's.
	Hop *Hop
	// Foreign are the objects the run would apply that exist without istioctl's ownership,
	// as the run's reads found them: what the ownership gate judges.
	Foreign []ownership.Foreign
	// FleetLinks is what the fleet-links check looks at (a fleet's precheck and verify).
	FleetLinks *FleetLinks

	// live holds what the cluster has of the expected objects, read once per run; links
	// the link checks' survey.
	live  *liveCache
	links *linkCache
}

// lister reads related objects live, for the readiness rules that need them.
func (e *Env) lister(ctx context.Context) readiness.Lister {
	return func(gvk schema.GroupVersionKind, namespace, selector string) ([]*unstructured.Unstructured, error) {
		items, err := e.Client.ListIn(ctx, gvk, namespace, selector)
		out := make([]*unstructured.Unstructured, len(items))
		for i := range items {
			out[i] = &items[i]
		}
		return out, err
	}
}

// concurrency bounds the requests a check has in flight.
const concurrency = 8

// liveCache holds, by identity, the cluster's version of objects the checks look at:
// object-health, drift and the webhook checks read the same objects.
type liveCache struct {
	mu sync.Mutex
	m  map[liveKey]*liveEntry
}

// liveKey is an object and the version it is read at.
type liveKey struct {
	apiVersion string
	ref        ref.Ref
}

type liveEntry struct {
	once sync.Once
	obj  *unstructured.Unstructured
	err  error
}

// Live reads the cluster's version of o (nil when it does not exist), once per run.
func (e *Env) Live(ctx context.Context, o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if e.live == nil {
		return e.Client.Get(ctx, o)
	}
	en := e.live.entry(o)
	en.once.Do(func() { en.obj, en.err = e.Client.Get(ctx, o) })
	return en.obj, en.err
}

func (c *liveCache) entry(o *unstructured.Unstructured) *liveEntry {
	key := liveKey{o.GetAPIVersion(), ref.Of(o)}
	c.mu.Lock()
	defer c.mu.Unlock()
	en, ok := c.m[key]
	if !ok {
		en = &liveEntry{}
		c.m[key] = en
	}
	return en
}

// listFrom is how many expected objects of one kind in one namespace make LiveAll list
// the kind there rather than read them one by one.
const listFrom = 3

// LiveAll reads the live versions of objs: one list per kind and namespace holding at
// least listFrom of them (the gateways of a large install), a read each for the rest
// (cluster-scoped kinds, whose lists can be large: CRDs), several requests at a time. A
// read per object made verify-install's time grow with the install, at the client's rate
// limit (50 requests/s): 5.2 s for 333 objects.
func (e *Env) LiveAll(ctx context.Context, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, []error) {
	if e.live != nil {
		e.prefetch(ctx, objs)
	}
	live := make([]*unstructured.Unstructured, len(objs))
	errs := make([]error, len(objs))
	var g errgroup.Group
	g.SetLimit(concurrency)
	for i, o := range objs {
		g.Go(func() error {
			live[i], errs[i] = e.Live(ctx, o)
			return nil
		})
	}
	_ = g.Wait() // each object's error is kept in errs
	return live, errs
}

// prefetch fills the live cache for the groups of objs worth a list. A list that fails
// (the user may read but not list) leaves its objects to be read one by one, as does a
// kind the cluster does not serve.
func (e *Env) prefetch(ctx context.Context, objs []*unstructured.Unstructured) {
	type group struct {
		gvk schema.GroupVersionKind
		ns  string
	}
	groups := map[group][]*unstructured.Unstructured{}
	var order []group
	for _, o := range objs {
		if o.GetNamespace() == "" {
			continue
		}
		g := group{o.GroupVersionKind(), o.GetNamespace()}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], o)
	}
	var eg errgroup.Group
	eg.SetLimit(concurrency)
	for _, g := range order {
		if len(groups[g]) < listFrom {
			continue
		}
		eg.Go(func() error {
			// A kind the cluster does not serve lists as empty: its objects are left to
			// the single reads, whose error says so.
			if _, err := e.Client.Mapper.RESTMapping(g.gvk.GroupKind(), g.gvk.Version); err != nil {
				return nil // left to the single reads
			}
			items, err := e.Client.ListIn(ctx, g.gvk, g.ns, "")
			if err != nil {
				return nil // left to the single reads
			}
			byName := make(map[string]*unstructured.Unstructured, len(items))
			for i := range items {
				byName[items[i].GetName()] = &items[i]
			}
			for _, o := range groups[g] {
				en := e.live.entry(o)
				en.once.Do(func() { en.obj = byName[o.GetName()] })
			}
			return nil
		})
	}
	_ = eg.Wait()
}

// Expected returns every expected object.
func (e *Env) Expected() []*unstructured.Unstructured {
	if e.Manifests == nil {
		return e.Installed
	}
	return render.All(e.Manifests)
}

// Report is the outcome of a run.
type Report struct {
	Command string `json:"command"`
	// Kind is what the checks looked at; Fleet says they looked at a fleet's clusters. The
	// report's closing words follow them.
	Kind    Kind     `json:"kind,omitempty"`
	Fleet   bool     `json:"fleet,omitempty"`
	Results []Result `json:"results"`
	Summary Summary  `json:"summary"`
}

// Kind is what a report's checks looked at.
type Kind string

const (
	// KindPrecheck: a cluster before an install or upgrade (x precheck); its subjects are the
	// cluster, the user's rights and the spec's needs.
	KindPrecheck Kind = "precheck"
	// KindVerify: an installation's objects (verify-install).
	KindVerify Kind = "verify"
)

// Summary counts results. An info result that did not pass is a note: it says something
// worth knowing (a Kubernetes version outside Istio's window) and fails nothing.
type Summary struct {
	Checked  int `json:"checked"`
	Failed   int `json:"failed"`
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Notes    int `json:"notes,omitempty"`
}

// Note says whether r is a note: an info result that did not pass.
func (r Result) Note() bool { return !r.Passed && r.Severity == Info }

// Failing says whether r failed: it did not pass and is no note.
func (r Result) Failing() bool { return !r.Passed && r.Severity != Info }

// Failed says whether the report has a failure at or above sev.
func (r *Report) FailedAt(sev Severity) bool {
	for _, res := range r.Results {
		if res.Passed {
			continue
		}
		if res.Severity == Error || (sev == Warning && res.Severity == Warning) || sev == Info {
			return true
		}
	}
	return false
}

// Run runs checks concurrently and returns their results, failures first (most important
// first), then passes, each group in a stable order.
func Run(ctx context.Context, command string, checks []Check, env *Env) *Report {
	if env.live == nil {
		env.live = &liveCache{m: map[liveKey]*liveEntry{}}
	}
	var mu sync.Mutex
	var all []Result
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func(i int, c Check) {
			defer wg.Done()
			out := c.Run(ctx, env)
			for j := range out {
				r := &out[j]
				r.Check = c.ID
				if r.Section == "" {
					r.Section = c.Section
				}
				if r.Severity == "" {
					r.Severity = c.Severity
				}
				// The check's code and hint name its failure: a note of a check that
				// fails at another severity carries neither.
				if !r.Note() || c.Severity == Info {
					if r.Code == "" {
						r.Code = c.Code
					}
					if r.Hint == "" && !r.Passed {
						r.Hint = c.Hint
					}
				}
				r.rank += i * 1000
			}
			mu.Lock()
			all = append(all, out...)
			mu.Unlock()
		}(i, c)
	}
	wg.Wait()
	return report(command, all)
}

// report orders results (failures first, the most important first, then passes, each group
// in a stable order) and sums them up.
func report(command string, all []Result) *Report {
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		// Notes stay among the passes: they fail nothing.
		fa, fb := a.Failing(), b.Failing()
		if fa != fb {
			return fa
		}
		if sa, sb := sevRank(a.Severity), sevRank(b.Severity); fa && sa != sb {
			return sa < sb
		}
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		return a.Object < b.Object
	})
	rep := &Report{Command: command, Results: all}
	objects := map[string]bool{}
	failedObjects := map[string]bool{}
	for _, r := range all {
		objects[r.Object] = true
		switch {
		case r.Passed:
		case r.Note():
			rep.Summary.Notes++
		default:
			failedObjects[r.Object] = true
			switch r.Severity {
			case Error:
				rep.Summary.Errors++
			case Warning:
				rep.Summary.Warnings++
			}
		}
	}
	rep.Summary.Checked, rep.Summary.Failed = len(objects), len(failedObjects)
	return rep
}

func sevRank(s Severity) int {
	switch s {
	case Error:
		return 0
	case Warning:
		return 1
	}
	return 2
}

// objectRank orders objects by kind, then by component: istiod before the gateways.
func objectRank(o *unstructured.Unstructured) int {
	comp := 9
	for i, c := range component.All {
		if string(c.Name) == o.GetLabels()[ownership.LabelComponent] {
			comp = i
		}
	}
	return kindRank(o.GetKind())*10 + comp
}

// kindRank orders objects by how much a problem with them matters: the control plane's
// workloads before the CRDs, webhooks and services, before RBAC and ConfigMaps
// (upstream #23510 reported a missing ConfigMap before a missing istiod).
func kindRank(kind string) int {
	switch kind {
	case "Deployment", "DaemonSet", "StatefulSet":
		return 0
	case "CustomResourceDefinition":
		return 1
	case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
		return 2
	case "Service":
		return 3
	case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
		return 5
	case "ConfigMap":
		return 6
	}
	return 4
}

// Prefix puts p before every result's section (a revision when several are checked).
func (r *Report) Prefix(p string) {
	for i := range r.Results {
		r.Results[i].Section = p + r.Results[i].Section
	}
}

// Merge joins reports of one command, keeping each report's order, and sums them up.
func Merge(command string, reports ...*Report) *Report {
	out := Join(command, reports...)
	// Failures first across reports too, keeping their order otherwise.
	sort.SliceStable(out.Results, func(i, j int) bool { return out.Results[i].Failing() && !out.Results[j].Failing() })
	return out
}
