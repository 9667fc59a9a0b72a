package migrate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/revision"
)

// FieldManager is the field manager of every write this package makes into a user's
// objects (namespace labels, the restart annotation) and of the progress record.
const FieldManager = "istioctl-revision-upgrade"

// RestartAnnotation is the pod-template annotation whose change restarts a workload's
// pods, as `kubectl rollout restart` does.
const RestartAnnotation = "kubectl.kubernetes.io/restartedAt"

// labelInjection is the namespace label that follows the default tag.
const labelInjection = "istio-injection"

// Options say what to migrate.
type Options struct {
	// From and To are the revisions ("default" for the default one).
	From, To string
	// Tags are the tags to move from From to To; nil: every tag pointing at From.
	Tags []string
	// Namespaces limit the workloads restarted to these namespaces (a first subset); nil: all.
	Namespaces []string
	// Relabel relabels the namespaces labelled istio.io/rev=<From> to To; without it they
	// are left (and their workloads with them).
	Relabel bool
	// BatchSize is how many workloads a batch restarts (at least 1).
	BatchSize int
	// MaxUnavailable is how many workloads of a batch restart at once (0: the whole batch).
	MaxUnavailable int
}

// Workload is a restartable owner of pods.
type Workload struct {
	Namespace string `json:"namespace"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
}

func (w Workload) String() string { return ref.New(w.Kind, w.Namespace, w.Name).String() }

// TagMove is a revision tag moved from one revision to another.
type TagMove struct {
	Tag  string `json:"tag"`
	From string `json:"from"`
	To   string `json:"to"`
}

// Relabel is a namespace whose istio.io/rev label changes from one value to another.
type Relabel struct {
	Namespace string `json:"namespace"`
	From      string `json:"from"`
	To        string `json:"to"`
}

// Plan is a migration decided from the cluster (and the progress record of an earlier run):
// nothing in it is written yet.
type Plan struct {
	From, To string
	// Tags move first, then the namespaces are relabelled, then the batches restart.
	Tags    []TagMove
	Relabel []Relabel
	// Left are the namespaces that name From directly and are not relabelled (no
	// --relabel): their workloads stay on From.
	Left []string
	// Unrestartable are the pods of From in migrating namespaces that no controller owns:
	// nothing restarts them.
	Unrestartable []ref.Ref
	// Batches are the workloads restarted together, in order; Done how many of them an
	// earlier run finished (they are not restarted again).
	Batches [][]Workload
	Done    int
	// MaxUnavailable: see Options.
	MaxUnavailable int
	// Resumed says the plan continues an earlier run's record.
	Resumed bool
	// Rollback says the plan returns the workloads of an earlier run to its From (the
	// plan's To): its tags and relabels are the record's, reversed.
	Rollback bool
}

// Remaining counts the workloads of the batches not finished yet.
func (p *Plan) Remaining() int {
	n := 0
	for _, b := range p.Batches[p.Done:] {
		n += len(b)
	}
	return n
}

// Idle says the plan writes nothing.
func (p *Plan) Idle() bool {
	return len(p.Tags) == 0 && len(p.Relabel) == 0 && p.Done >= len(p.Batches)
}

// Writes lists every write the plan makes into objects it does not own, one line each:
// what a person confirms.
func (p *Plan) Writes() []string {
	var out []string
	for _, t := range p.Tags {
		out = append(out, fmt.Sprintf("revision tag %s: %s -> %s", t.Tag, t.From, t.To))
	}
	for _, r := range p.Relabel {
		out = append(out, fmt.Sprintf("%s: label %s=%s -> %s (field manager %s)", ref.New("Namespace", "", r.Namespace), ownership.LabelRevision, r.From, r.To, FieldManager))
	}
	for i, b := range p.Batches {
		if i < p.Done {
			continue
		}
		names := make([]string, len(b))
		for j, w := range b {
			names[j] = w.String()
		}
		out = append(out, fmt.Sprintf("batch %d/%d: annotation %s on the pod template of %s (field manager %s)", i+1, len(p.Batches), RestartAnnotation, strings.Join(names, ", "), FieldManager))
	}
	return out
}

// Decide plans the migration from what revision.List found (revs) and the progress record
// of an earlier run (nil: none).
func Decide(revs []*revision.Revision, rec *Record, o Options) (*Plan, error) {
	if o.BatchSize < 1 {
		return nil, fmt.Errorf("--batch-size must be at least 1, not %d", o.BatchSize)
	}
	if o.MaxUnavailable < 0 {
		return nil, fmt.Errorf("--max-unavailable must not be negative, not %d", o.MaxUnavailable)
	}
	from, to := find(revs, o.From), find(revs, o.To)
	if from == nil {
		from = &revision.Revision{Name: o.From}
	}
	p := &Plan{From: o.From, To: o.To, MaxUnavailable: o.MaxUnavailable}
	moving := map[string]bool{} // namespaces whose pods To injects once the plan is written
	if to != nil {
		for _, s := range to.Namespaces {
			moving[s.Namespace] = true
		}
	}
	tags := o.Tags
	if tags == nil {
		tags = from.Tags
	}
	for _, t := range tags {
		if !slices.Contains(from.Tags, t) {
			continue // already moved (or not From's)
		}
		p.Tags = append(p.Tags, TagMove{Tag: t, From: o.From, To: o.To})
	}
	for _, s := range from.Namespaces {
		switch {
		case s.Tag != "" && slices.Contains(tags, s.Tag):
			moving[s.Namespace] = true
		case s.Tag == "" && s.Label == ownership.LabelRevision+"="+o.From && o.Relabel:
			p.Relabel = append(p.Relabel, Relabel{Namespace: s.Namespace, From: o.From, To: o.To})
			moving[s.Namespace] = true
		case s.Tag == "" && s.Label == ownership.LabelRevision+"="+o.From:
			p.Left = append(p.Left, s.Namespace)
		}
	}
	var fresh []Workload
	for _, w := range from.Workloads {
		if !moving[w.Namespace] || (o.Namespaces != nil && !slices.Contains(o.Namespaces, w.Namespace)) {
			continue
		}
		switch w.Kind {
		case "Deployment", "StatefulSet", "DaemonSet":
			fresh = append(fresh, Workload{Namespace: w.Namespace, Kind: w.Kind, Name: w.Name})
		default:
			for _, pod := range w.Pods {
				p.Unrestartable = append(p.Unrestartable, ref.New("Pod", w.Namespace, pod.Pod))
			}
		}
	}
	sort.Slice(fresh, func(i, j int) bool { return fresh[i].String() < fresh[j].String() })
	if rec != nil && rec.From == o.From && rec.To == o.To {
		p.Resumed, p.Batches, p.Done = true, rec.Batches, rec.Done
		fresh = slices.DeleteFunc(fresh, func(w Workload) bool { return rec.has(w) })
	}
	for len(fresh) > 0 {
		n := min(o.BatchSize, len(fresh))
		p.Batches = append(p.Batches, fresh[:n:n])
		fresh = fresh[n:]
	}
	return p, nil
}

// Reverse plans the rollback of the run rec records: its tags and relabels undone, the
// workloads of its batches begun restarted back to its From, in the same batches.
func Reverse(rec *Record, maxUnavailable int) (*Plan, error) {
	if rec == nil {
		return nil, fmt.Errorf("no revision upgrade to roll back: no progress record %s (it is written by upgrade --strategy revision and removed by --prune-old)", RecordName)
	}
	p := &Plan{From: rec.To, To: rec.From, MaxUnavailable: maxUnavailable, Rollback: true}
	for _, t := range rec.Tags {
		p.Tags = append(p.Tags, TagMove{Tag: t.Tag, From: t.To, To: t.From})
	}
	for _, r := range rec.Relabel {
		p.Relabel = append(p.Relabel, Relabel{Namespace: r.Namespace, From: r.To, To: r.From})
	}
	begun := min(rec.Done+1, len(rec.Batches))
	p.Batches = rec.Batches[:begun]
	return p, nil
}

func find(revs []*revision.Revision, name string) *revision.Revision {
	for _, r := range revs {
		if r.Name == ownership.Rev(name) {
			return r
		}
	}
	return nil
}
