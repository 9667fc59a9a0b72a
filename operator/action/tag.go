package action

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/tag"
)

// TagSet creates or moves a revision tag (tag set), or only renders it (tag generate).
type TagSet struct {
	*Config
	Tag, Revision, WebhookName, ManifestsDir string
	Overwrite, AutoInject, DryRun, Generate  bool
	// Replan: see Install.Replan.
	Replan bool
	// Events receives the cluster lock's events (waiting for another writer, ...); nil drops them.
	Events event.Sink
}

// TagSetPlan is a generated tag checked against the cluster.
type TagSetPlan struct {
	// Overlaps are the pods the new webhook and another injector would both inject
	// (upstream's IST0139): applying asks for confirmation.
	Overlaps []check.Result
	planned
	plan *tag.Plan
}

// Plan renders the tag and checks it against the cluster (and reads the cluster lock, as
// Install.Plan does, unless it only generates).
func (a *TagSet) Plan(ctx context.Context) (*TagSetPlan, error) {
	r, err := a.planning(ctx, a.Events, a.DryRun)
	if err != nil {
		return nil, err
	}
	p, err := a.plan(ctx, r)
	if err == nil && !a.Generate {
		p.lock = r.planLockState(ctx)
	}
	return p, err
}

func (a *TagSet) plan(ctx context.Context, r *run) (*TagSetPlan, error) {
	p, err := tag.Generate(ctx, r.client, tag.Options{
		Tag: a.Tag, Revision: a.Revision, IstioNamespace: a.istioNamespace(), WebhookName: a.WebhookName,
		ManifestsDir: a.ManifestsDir, AutoInjectNamespaces: a.AutoInject, Overwrite: a.Overwrite, Generate: a.Generate,
		UserManaged: true,
	})
	if err != nil {
		return nil, err
	}
	return &TagSetPlan{Overlaps: p.Overlaps, plan: p, planned: planned{client: r.client}}, nil
}

// YAML is the tag's objects as a manifest (tag generate).
func (p *TagSetPlan) YAML() ([]byte, error) { return render.YAML(p.plan.Objects) }

// Preview is what Run would do to the tag's objects, from a server-side dry run, as a
// summary (the fields each update changes included): for a person about to confirm.
func (a *TagSet) Preview(ctx context.Context, p *TagSetPlan) (*install.Summary, error) {
	changes, err := p.plan.Apply(ctx, p.client, true)
	if err != nil {
		return nil, fmt.Errorf("checking revision tag %q (server-side dry run): %w", a.Tag, err)
	}
	out := make([]install.Change, len(changes))
	for i, c := range changes {
		out[i] = install.Change{Object: c.Object, Component: tagGroup, Action: c.Action, DryRun: true, Fields: c.Fields}
	}
	return tagSummary(install.Summarize(nil, out)), nil
}

// tagGroup is the group a summary counts a tag's objects in (tag set, and an install's and
// an uninstall's summaries).
const (
	tagGroup      = "revision-tags"
	tagGroupTitle = "Revision tags"
)

// tagSummary titles the tag's group of s.
func tagSummary(s *install.Summary) *install.Summary {
	for i := range s.Components {
		if s.Components[i].Component == tagGroup {
			s.Components[i].Title = tagGroupTitle
		}
	}
	return s
}

// Run applies the plan (nil: it plans first; a server-side dry run with DryRun) by the
// plan-then-write protocol, and says what changed, also when it fails part-way. It holds
// the cluster lock as Install.Run does, and stops with a *PlanChangedError, writing
// nothing, when the tag's plan changed.
func (a *TagSet) Run(ctx context.Context, p *TagSetPlan) ([]tag.Change, error) {
	r, err := a.start(stateOf(p), a.Events, a.DryRun)
	if err != nil {
		return nil, err
	}
	steps := protocol[*TagSetPlan, []tag.Change]{
		lock: func(*TagSetPlan) lockRun {
			return lockRun{action: "tag", revision: history.Rev(a.Revision), namespace: a.istioNamespace()}
		},
		plan: a.plan,
		replan: func(ctx context.Context, r *run, shown *TagSetPlan) (*TagSetPlan, []string, error) {
			fresh, err := a.plan(ctx, r)
			if err != nil {
				return nil, nil, err
			}
			return fresh, tagPlanDiff(a.Tag, shown.plan, fresh.plan), nil
		},
		carryOut: a.apply,
	}
	return steps.execute(ctx, r, p, a.Replan)
}

func (a *TagSet) apply(ctx context.Context, _ *run, p *TagSetPlan) ([]tag.Change, error) {
	changes, err := p.plan.Apply(ctx, p.client, a.DryRun)
	if err != nil && lockLost(ctx) == nil {
		return changes, fmt.Errorf("failed to apply revision tag %q: %w", a.Tag, err)
	}
	return changes, err
}

// tagPlanDiff says how two plans of a tag differ: where it pointed, what it overlaps,
// which injectors it deactivates.
func tagPlanDiff(name string, before, now *tag.Plan) []string {
	var out []string
	if before.Previous != now.Previous {
		out = append(out, fmt.Sprintf("tag %q pointed at %q when planned, at %q now", name, before.Previous, now.Previous))
	}
	if len(before.Overlaps) != len(now.Overlaps) {
		out = append(out, fmt.Sprintf("pods injected twice: %d planned, %d now", len(before.Overlaps), len(now.Overlaps)))
	}
	if len(before.Deactivate) != len(now.Deactivate) {
		out = append(out, fmt.Sprintf("injectors deactivated: %d planned, %d now", len(before.Deactivate), len(now.Deactivate)))
	}
	return out
}

// TagList lists the revision tags.
type TagList struct{ *Config }

// Run finds the tags.
func (a *TagList) Run(ctx context.Context) ([]tag.Description, error) {
	client, err := a.newClient()
	if err != nil {
		return nil, err
	}
	tags, err := tag.List(ctx, client, a.istioNamespace())
	if err != nil {
		return nil, fmt.Errorf("failed to retrieve revision tags: %w", err)
	}
	return tags, nil
}

// TagRemove removes a revision tag.
type TagRemove struct {
	*Config
	Tag string
	// Replan: see Install.Replan.
	Replan bool
	// Events receives the cluster lock's events; nil drops them.
	Events event.Sink
}

// TagRemovePlan is a tag's objects and the namespaces that still use it.
type TagRemovePlan struct {
	// Objects are removed, Kind/namespace/name, in removal order.
	Objects []string
	// Namespaces are labelled with the tag: they are no longer injected (confirm first).
	Namespaces []string
	planned
	objs []*unstructured.Unstructured
}

// Summary is what removing the tag removes (from the plan's reads): for a person about to
// confirm.
func (p *TagRemovePlan) Summary() *install.Summary {
	return install.SummarizeRemoval(p.objs, func(*unstructured.Unstructured) (string, string) { return tagGroup, "Revision tags" })
}

// Plan finds the tag's objects and who uses it (and reads the cluster lock, as
// Install.Plan does).
func (a *TagRemove) Plan(ctx context.Context) (*TagRemovePlan, error) {
	client, err := a.newClient()
	if err != nil {
		return nil, err
	}
	r := a.begin(client, a.Events, false)
	p, err := a.plan(ctx, r)
	if err == nil {
		p.lock = r.planLockState(ctx)
	}
	return p, err
}

func (a *TagRemove) plan(ctx context.Context, r *run) (*TagRemovePlan, error) {
	client := r.client
	objs, err := tag.Objects(ctx, client, a.istioNamespace(), a.Tag)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("cannot remove tag %q: cannot find MutatingWebhookConfiguration or Service for tag", a.Tag)
	}
	nss, err := tag.NamespacesUsing(ctx, client, a.Tag)
	if err != nil {
		return nil, fmt.Errorf("failed to retrieve namespaces dependent on tag %q: %w", a.Tag, err)
	}
	p := &TagRemovePlan{Namespaces: nss, objs: objs, planned: planned{client: client}}
	for _, o := range objs {
		p.Objects = append(p.Objects, ref.Of(o).String())
	}
	return p, nil
}

// Run removes the tag's objects (nil: it plans first) by the plan-then-write protocol,
// holding the cluster lock as Install.Run does; a *PlanChangedError, removing nothing, when
// the tag's objects or the namespaces using it changed since the plan.
func (a *TagRemove) Run(ctx context.Context, p *TagRemovePlan) error {
	r, err := a.start(stateOf(p), a.Events, false)
	if err != nil {
		return err
	}
	steps := protocol[*TagRemovePlan, struct{}]{
		lock: func(*TagRemovePlan) lockRun { return lockRun{action: "tag", namespace: a.istioNamespace()} },
		plan: a.plan,
		replan: func(ctx context.Context, r *run, shown *TagRemovePlan) (*TagRemovePlan, []string, error) {
			fresh, err := a.plan(ctx, r)
			if err != nil {
				return nil, nil, err
			}
			diff := targetsDiff(shown.Objects, fresh.Objects)
			if !slices.Equal(shown.Namespaces, fresh.Namespaces) {
				diff = append(diff, fmt.Sprintf("namespaces using the tag: %s planned, %s now", strings.Join(shown.Namespaces, " "), strings.Join(fresh.Namespaces, " ")))
			}
			return fresh, diff, nil
		},
		carryOut: func(ctx context.Context, _ *run, p *TagRemovePlan) (struct{}, error) {
			return struct{}{}, tag.Remove(ctx, p.client, p.objs, false)
		},
	}
	_, err = steps.execute(ctx, r, p, a.Replan)
	return err
}
