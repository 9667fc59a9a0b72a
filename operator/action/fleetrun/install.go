package fleetrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/fleet"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/schedule"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Install is x fleet install: every cluster of a fleet file installed by the same
// Install action a single-cluster install runs, under that cluster's lock, and the links
// between them, in the order the mesh needs: each cluster's cacerts, then its install (a
// remote's past its Base once its primary's Pilot stands), each link once both its clusters
// stand. Steps run
// as soon as what they need is done; a cluster that fails stops only what needs it.
type Install struct {
	*Fleet
	// ReadinessTimeout bounds each cluster's wait for readiness.
	ReadinessTimeout time.Duration
	// Replan: the plan Run is given was shown to someone (see Install.Replan).
	Replan bool
	// Events receives every cluster's events, each with its Cluster, then the fleet's done.
	Events event.Sink
}

// Plan is what a fleet install will do, from reads only.
type Plan struct {
	Fleet, MeshID string
	Members       []*Member
	// Links are the link Secrets to create, check (kept while their token authenticates)
	// and remove.
	Links []*LinkPlan
	// Kept are the links left that a context name or a label alone would have had the run
	// delete, each with why (the run says each in a kept event).
	Kept []KeptLink

	f *fleet.Fleet
	// dropped are the clusters the file no longer names that this fleet's links point at.
	dropped []*Member
}

// Member is one cluster's part of a fleet plan.
type Member struct {
	Name, Context, Role, Primary, Namespace string
	// Install (Uninstall) is its install (uninstall) plan; nil when it could not be
	// planned (Err says why).
	Install   *action.InstallPlan
	Uninstall *action.UninstallPlan
	Err       error
	// Notes say what the run does in it that its install plan cannot show yet.
	Notes []string

	cluster   *fleet.Cluster
	cfg       *action.Config
	installer *action.Install
	uninstall *action.Uninstall
	client    *kube.Client
	// uid is its identity once reached (link.ClusterUID).
	uid string
	// address is the east-west gateway address of its primary it was planned with, when
	// the file gives it none.
	address string
	// mu keeps this process's own writers of the cluster (its link writes) from
	// contending for the cluster's lock.
	mu sync.Mutex
}

// Reached says the cluster answered.
func (m *Member) Reached() bool { return m.client != nil }

// LinkStep is what a fleet run does to a link Secret.
type LinkStep = event.LinkStep

// The link plan's steps.
const (
	LinkCreate = event.LinkStepCreate
	LinkCheck  = event.LinkStepCheck
	LinkRemove = event.LinkStepRemove
)

// LinkPlan is one link Secret a fleet run makes, checks or removes.
type LinkPlan struct {
	// Into is the cluster holding the Secret, From the one whose credentials it holds;
	// Secret is namespace/name.
	Into, From, Secret string
	Action             LinkStep

	link *fleet.Link
	// fromContext and fromUID are where the credentials come from (a removed link's
	// annotations: the context it was reached through, the cluster's identity).
	fromContext, fromUID string
	// obj is the Secret to remove, as read; holder the cluster holding it when the file no
	// longer names that cluster.
	obj    *unstructured.Unstructured
	holder *Member
}

// secretRef is the link Secret's reference, from Secret's namespace/name.
func (l *LinkPlan) secretRef() ref.Ref {
	ns, name, _ := strings.Cut(l.Secret, "/")
	return ref.New("Secret", ns, name)
}

// Plan reads every cluster at once: its install plan, the link Secrets of this fleet it
// holds. It writes nothing. A cluster that cannot be reached or planned is in the plan with
// its error; the rest goes on.
func (a *Install) Plan(ctx context.Context) (*Plan, error) {
	f, _, err := a.loadFleet(false)
	if err != nil {
		return nil, err
	}
	p, err := a.planMembers(ctx, f, func(m *Member) { a.planMember(ctx, f, m) })
	if err != nil {
		return nil, err
	}
	for _, m := range p.Members {
		a.planAddress(ctx, p, m)
	}
	p.Links, err = a.planLinks(ctx, p, f.Links, a.reach)
	return p, err
}

// planMembers plans every cluster of f at once with plan.
func (a *Fleet) planMembers(ctx context.Context, f *fleet.Fleet, plan func(*Member)) (*Plan, error) {
	p := &Plan{Fleet: f.Name, MeshID: f.MeshID, f: f}
	var wg sync.WaitGroup
	for _, c := range f.Clusters {
		m := a.newMember(c)
		p.Members = append(p.Members, m)
		wg.Add(1)
		go func() {
			defer wg.Done()
			plan(m)
		}()
	}
	wg.Wait()
	return p, ctx.Err()
}

func (a *Install) planMember(ctx context.Context, f *fleet.Fleet, m *Member) {
	c := m.cluster
	if !a.reach(ctx, m) {
		return
	}
	m.installer = &action.Install{Config: m.cfg, Spec: f.Spec(c), ReadinessTimeout: a.ReadinessTimeout, Replan: a.Replan, Events: event.InCluster(orDiscard(a.Events), c.Name)}
	if m.Install, m.Err = m.installer.Plan(ctx); m.Install != nil {
		m.Namespace = m.Install.Namespace
	}
	if ex := f.Exposes(c); len(ex) > 0 {
		m.Notes = append(m.Notes, "then its east-west gateway, the eastwest install ("+strings.Join(ex, ", ")+")")
	}
}

// newMember is cluster c's part of a plan, with its own connection (not made yet).
func (a *Fleet) newMember(c *fleet.Cluster) *Member {
	return &Member{Name: c.Name, Context: c.Context, Role: string(c.Role), Primary: c.Primary, cluster: c, cfg: a.member(c, a.clusterWarn(c.Name))}
}

// reach connects to the member's cluster and reads its identity; false (with its Err) when
// it does not answer. Every action of the member then goes through that one client.
func (a *Fleet) reach(ctx context.Context, m *Member) bool {
	client, err := m.cfg.Connect(ctx)
	if err != nil {
		m.Err = fmt.Errorf("cannot reach it through context %s: %w", m.Context, err)
		return false
	}
	return identify(ctx, m, client)
}

func (a *Fleet) clusterWarn(name string) func(string) {
	return func(s string) { a.Say("cluster " + name + ": " + s) }
}

// Result is what a fleet run did.
type Result struct {
	event.FleetOutcome
	// Failed names what failed or was left out; empty when everything converged.
	Failed []string
}

// Err is the run's error: nil when every cluster and link converged.
func (r *Result) Err() error {
	if len(r.Failed) == 0 {
		return nil
	}
	return &Error{Failed: r.Failed}
}

// Error is a fleet run that did not converge everywhere: what failed, and each
// cluster and link it left out.
type Error struct{ Failed []string }

func (e *Error) Error() string {
	return "the fleet did not converge:\n  " + strings.Join(e.Failed, "\n  ") +
		"\nFix what these lines name, then run the same command again: it continues from what is there"
}

// unmet says err is a wait on hooks that did not stand (needError says it).
func unmet(err error) bool {
	var need *schedule.NeedError
	var stop *schedule.StoppedError
	return errors.As(err, &need) || errors.As(err, &stop)
}

// needError is a wait on hooks that did not stand, as a fleet run says it: the cluster
// that did not converge, or ctx's error when the run was stopped.
func needError(err error) error {
	var need *schedule.NeedError
	if errors.As(err, &need) {
		cluster, _, _ := strings.Cut(need.Need, "/")
		return fmt.Errorf("needs cluster %s, which did not converge", cluster)
	}
	var stop *schedule.StoppedError
	if errors.As(err, &stop) {
		return stop.Err
	}
	return err
}

// Run carries out the plan (nil: it plans first) by the plan-then-write protocol: each
// cluster's install is a run of its own, under its cluster's lock, as soon as what it needs
// stands, and each link the same; the fleet's done says what happened to each. Its error
// (a *Error) names what failed.
func (a *Install) Run(ctx context.Context, p *Plan) (*Result, error) {
	return a.execute(ctx, a.Events, p, event.OperationInstall, a.Plan, a.converge)
}

// execute is a fleet run by the plan-then-write protocol: its plan (when given none), its
// clusters and links carried out by carry, each in runs of its own, then the fleet's done.
func (a *Fleet) execute(ctx context.Context, events event.Sink, p *Plan, op event.Operation,
	plan func(context.Context) (*Plan, error), carry func(context.Context, *Plan) (*Result, error)) (*Result, error) {
	return action.Composite(ctx, a.Config, events, p, plan, carry, func(res *Result, err error) event.Event { return fleetDone(res, op, err) })
}

// orDiscard is s, or a sink that drops events when there is none.
func orDiscard(s event.Sink) event.Sink {
	if s == nil {
		return event.Discard{}
	}
	return s
}

// converge installs every cluster and makes every link, each as soon as what it needs
// stands.
func (a *Install) converge(ctx context.Context, p *Plan) (*Result, error) {
	p.sayKept(a.Events)
	res := p.newResult()
	hooks := schedule.New()
	var nodes []schedule.Node
	for i, m := range p.Members {
		nodes = append(nodes, schedule.Node{Name: m.Name, Run: func(ctx context.Context) error {
			start := time.Now()
			outcome, err := a.installMember(ctx, p, m, hooks)
			res.Clusters[i] = clusterRow(m, outcome, err, start)
			return err
		}})
	}
	members := p.members()
	for i, l := range p.Links {
		nodes = append(nodes, schedule.Node{Name: "link " + l.Into + " " + l.Secret, Run: func(ctx context.Context) error {
			outcome, err := a.runLink(ctx, p, l, members, hooks)
			res.Links[i] = linkRow(l, outcome, err)
			linkEvent(a.Events, l, outcome, err)
			return err
		}})
	}
	hooks.Run(ctx, nodes, nil)
	return res, res.end(ctx)
}

// end is the error a fleet run ends with: interrupted, or what failed.
func (r *Result) end(ctx context.Context) error {
	r.Failed = failures(r.FleetOutcome)
	if err := ctx.Err(); err != nil {
		return err
	}
	return r.Err()
}

// newResult is a result with a row for each cluster and link of the plan, to fill in.
func (p *Plan) newResult() *Result {
	return &Result{FleetOutcome: event.FleetOutcome{Clusters: make([]event.FleetCluster, len(p.Members)), Links: make([]event.FleetLink, len(p.Links))}}
}

// sayKept emits a kept event for each link the plan leaves, before the run writes.
func (p *Plan) sayKept(events event.Sink) {
	for _, k := range p.Kept {
		keptEvent(events, k)
	}
}

func (p *Plan) members() map[string]*Member {
	out := map[string]*Member{}
	for _, m := range p.Members {
		out[m.Name] = m
	}
	return out
}

// installMember writes the cluster's cacerts, then installs it: a remote's components past
// its Base once its primary's Pilot stands.
func (a *Install) installMember(ctx context.Context, p *Plan, m *Member, hooks *schedule.Hooks) (event.ClusterOutcome, error) {
	if m.Err != nil {
		return event.ClusterFailed, m.Err
	}
	if err := a.writeCACerts(ctx, p.f, m); err != nil {
		return event.ClusterFailed, err
	}
	own := hooks.Scope(m.Name)
	if m.Primary != "" {
		// A remote needs its primary's istiod serving (its injection goes there), from its
		// Pilot on: its Base (CRDs, reader account) is applied at once, the rest once its
		// primary's Pilot is ready, beside the rest of that install. With no address in
		// the file, the gateway that gives it one: the whole of its primary's install,
		// before it plans.
		if needsAddress(m) {
			if err := hooks.Wait(ctx, m.Primary); err != nil {
				return event.ClusterSkipped, needError(err)
			}
		} else {
			own = own.After([]string{m.Primary + "/" + string(component.Pilot)}, string(component.Base))
		}
	}
	in, plan, err := a.withAddress(ctx, p, m)
	if err != nil {
		return event.ClusterFailed, err
	}
	// A copy reporting its components to the fleet's hooks: the member's action stays as
	// planned.
	scoped := *in
	scoped.Hooks = own
	r, err := scoped.Run(ctx, plan)
	var need *schedule.NeedError
	if errors.As(err, &need) {
		return event.ClusterFailed, fmt.Errorf("%w (only its Base was applied)", needError(err))
	}
	if err != nil {
		return event.ClusterFailed, err
	}
	wrote, err := a.installEastWest(ctx, p.f, m, hooks.Scope(m.Name))
	if err != nil {
		return event.ClusterFailed, err
	}
	if r.Applied == 0 && r.Pruned == 0 && !wrote {
		return event.ClusterUnchanged, nil
	}
	return event.ClusterInstalled, nil
}

// writeCACerts applies the cluster's cacerts Secret, when the fleet gives one, under the
// cluster's lock and before its install: istiod signs with it from its first start.
func (a *Install) writeCACerts(ctx context.Context, f *fleet.Fleet, m *Member) error {
	cc := f.CACertsOf(m.cluster)
	if cc == nil {
		return nil
	}
	secret, err := cc.Secret(m.Namespace)
	if err != nil {
		return err
	}
	return m.cfg.WriteLocked(ctx, m.client, "fleet-cacerts", m.Namespace, func(ctx context.Context) error {
		return writeSecret(ctx, m.client, secret)
	})
}

func clusterRow(m *Member, outcome event.ClusterOutcome, err error, start time.Time) event.FleetCluster {
	row := event.FleetCluster{Cluster: m.Name, Role: m.Role, Outcome: outcome, Seconds: time.Since(start).Round(10 * time.Millisecond).Seconds()}
	if err != nil {
		row.Error = firstLineOf(err.Error())
	}
	return row
}

func linkRow(l *LinkPlan, outcome event.LinkOutcome, err error) event.FleetLink {
	row := event.FleetLink{Into: l.Into, From: l.From, Secret: l.Secret, Outcome: outcome}
	if err != nil {
		row.Error = firstLineOf(err.Error())
	}
	return row
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// failures are the lines naming each cluster that failed or was skipped and each link
// left out or failed.
func failures(o event.FleetOutcome) []string {
	var out []string
	for _, c := range o.Clusters {
		if c.Error != "" {
			out = append(out, fmt.Sprintf("cluster %s %s: %s", c.Cluster, c.Outcome, c.Error))
		}
	}
	for _, l := range o.Links {
		if l.Error != "" {
			out = append(out, fmt.Sprintf("link %s in cluster %s (%s's credentials) %s: %s", l.Secret, l.Into, l.From, l.Outcome, l.Error))
		}
	}
	return out
}

// fleetDone is the fleet's last done: no cluster, the outcome of each.
func fleetDone(res *Result, operation event.Operation, err error) event.Event {
	e := event.Event{RunEnd: event.RunEnd{Operation: operation}}
	if res != nil {
		e.Fleet = &res.FleetOutcome
	}
	switch {
	case errors.Is(err, context.Canceled):
		e.Result, e.Error = event.RunInterrupted, "interrupted"
	case err == nil && res != nil:
		e.Message = fmt.Sprintf("%d clusters, %d links", len(res.Clusters), len(res.Links))
	}
	return e
}

// resolvedNamespace is a cluster's istio namespace from its spec, when its plan has none.
func resolvedNamespace(f *fleet.Fleet, c *fleet.Cluster) string {
	res, err := spec.Resolve(f.Spec(c))
	if err != nil || res == nil {
		return action.DefaultIstioNamespace
	}
	return fleet.Namespace(res)
}
