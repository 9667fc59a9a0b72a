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
	// Namespaces limit the workloads restarted to these namespaces (a first subset), those a
	// resumed run's record names too; nil: all. A rollback refuses them.
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
	// Skipped are the entries of the record (workloads, relabels) the cluster no longer
	// bears out, left out of the plan, each with why.
	Skipped []Skip
	// Deferred are the recorded workloads left out of this run that may yet move: the
	// record keeps them for a later run.
	Deferred []Workload
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

// Decide plans the migration from what the cluster holds (live) and the progress record
// of an earlier run (nil: none). A resumed run's recorded batches are checked against live
// as fresh ones are: only the workloads that exist, whose pods From or To injects, within
// o.Namespaces, are restarted; the others are skipped.
func Decide(live *Live, rec *Record, o Options) (*Plan, error) {
	revs := live.Revisions
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
		fresh = p.resume(live, rec, o.Namespaces, fresh)
	}
	p.batch(fresh, o.BatchSize)
	return p, nil
}

// resume continues rec: its relabelled namespaces are checked, its finished batches stay
// done, its other batches keep the workloads live bears out (within namespaces, nil: all),
// and its deferred workloads that now qualify join fresh, which loses the workloads rec
// names. It returns fresh.
func (p *Plan) resume(live *Live, rec *Record, namespaces []string, fresh []Workload) []Workload {
	p.Resumed, p.Done = true, min(rec.Done, len(rec.Batches))
	// The namespaces the earlier run relabelled are not written again; one deleted or
	// relabelled since is reported (its workloads are judged on their own).
	for _, r := range rec.Relabel {
		p.relabelChecked(live, Relabel{Namespace: r.Namespace, From: r.To, To: r.To})
	}
	p.Batches = append(p.Batches, rec.Batches[:p.Done]...)
	for _, b := range rec.Batches[p.Done:] {
		if b = p.checked(live, b, namespaces); len(b) > 0 {
			p.Batches = append(p.Batches, b)
		}
	}
	recorded := map[Workload]bool{}
	for _, w := range rec.workloads() {
		recorded[w] = true
	}
	fresh = slices.DeleteFunc(fresh, func(w Workload) bool { return recorded[w] })
	return append(p.checked(live, rec.Deferred, namespaces), fresh...)
}

// batch appends ws to the plan's batches, size a batch (below 1: all in one).
func (p *Plan) batch(ws []Workload, size int) {
	if size < 1 {
		size = len(ws)
	}
	for len(ws) > 0 {
		n := min(size, len(ws))
		p.Batches = append(p.Batches, ws[:n:n])
		ws = ws[n:]
	}
}

// Reverse plans the rollback of the run rec records, checked against what the cluster holds
// (live): its tags undone; its relabels undone where the namespace exists and still carries
// the label the run set; the workloads of its batches begun that exist and whose pods its
// From or To injects restarted back to its From, in the same batches, then its deferred
// workloads that moved (some pod on its To; those that never moved are left as they are).
// The other entries are skipped. A rollback returns every workload the record names:
// o.Namespaces is refused.
func Reverse(live *Live, rec *Record, o Options) (*Plan, error) {
	if rec == nil {
		return nil, fmt.Errorf("no revision upgrade to roll back: no progress record %s (it is written by upgrade --strategy revision and removed by --prune-old)", RecordName)
	}
	if o.Namespaces != nil {
		return nil, fmt.Errorf("--namespaces with --rollback: a rollback returns every workload the revision upgrade moved; run it without --namespaces")
	}
	p := &Plan{From: rec.To, To: rec.From, MaxUnavailable: o.MaxUnavailable, Rollback: true}
	for _, t := range rec.Tags {
		p.Tags = append(p.Tags, TagMove{Tag: t.Tag, From: t.To, To: t.From})
	}
	for _, r := range rec.Relabel {
		if back := (Relabel{Namespace: r.Namespace, From: r.To, To: r.From}); p.relabelChecked(live, back) {
			p.Relabel = append(p.Relabel, back)
		}
	}
	begun := min(rec.Done+1, len(rec.Batches))
	for _, b := range rec.Batches[:begun] {
		if b = p.checked(live, b, nil); len(b) > 0 {
			p.Batches = append(p.Batches, b)
		}
	}
	var moved []Workload
	for _, w := range rec.Deferred {
		if live.Existing[w] && !live.injectedBy(w, rec.To) {
			continue // it never moved: nothing to return
		}
		moved = append(moved, w)
	}
	p.batch(p.checked(live, moved, nil), o.BatchSize)
	p.Deferred = nil // nothing is kept: the rollback removes the record
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
