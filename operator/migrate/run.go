package migrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// Runner carries out plans: one per call.
type Runner struct {
	Client *kube.Client
	// Namespace is the istio namespace, where the progress record lives.
	Namespace string
	Events    event.Sink
	// DryRun sends every write as a server-side dry run and waits for nothing.
	DryRun bool
	// Timeout bounds each batch's wait for its pods.
	Timeout time.Duration
	// MoveTag points a revision tag at a revision (the tag's objects are rendered and
	// applied elsewhere: operator/tag through the action).
	MoveTag func(ctx context.Context, t TagMove) error
	// Now stamps the restart annotation (nil: time.Now).
	Now func() time.Time
}

// Result is what a run did.
type Result struct {
	// Finished counts the batches finished by this run; Restarted the workloads it restarted.
	Finished, Restarted int
}

// BatchError is a batch that did not pass its gate: the workload and why.
type BatchError struct {
	Batch, Batches int
	Workload       Workload
	Cause          error
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("batch %d/%d: %s: %v", e.Batch, e.Batches, e.Workload, e.Cause)
}

func (e *BatchError) Unwrap() error { return e.Cause }

// Run writes the plan: the progress record, the tags, the namespace labels, then each
// batch not finished yet, restarted and gated; the record counts each batch it finishes, so
// the same plan made again resumes after it. A rollback's plan removes the record once every
// batch is back. prev is the record the plan was made with (nil: none).
func (r *Runner) Run(ctx context.Context, p *Plan, prev *Record) (Result, error) {
	var res Result
	var rec *Record
	if !p.Rollback {
		rec = recordOf(p, prev)
		if err := saveRecord(ctx, r.Client, r.Namespace, rec, r.DryRun); err != nil {
			return res, err
		}
	}
	for _, t := range p.Tags {
		if err := r.MoveTag(ctx, t); err != nil {
			return res, fmt.Errorf("moving revision tag %s to %s: %w", t.Tag, t.To, err)
		}
	}
	// The namespaces at once (each judged on its own read): a relabel is a round trip each,
	// and a fleet of namespaces waited on them one by one before the first batch.
	var relabels errgroup.Group
	relabels.SetLimit(relabelConcurrency)
	for _, l := range p.Relabel {
		relabels.Go(func() error { return r.relabel(ctx, l) })
	}
	if err := relabels.Wait(); err != nil {
		return res, err
	}
	var w *kube.Watcher
	if !r.DryRun {
		w = r.Client.NewWatcher()
		w.OnStall(func(s kube.Stall) {
			r.Events.Emit(event.Stalled(event.Event{}, s.Watch(), s.LastHeard, s.Missed, s.Advice()))
		})
		defer w.Stop()
	}
	for i := p.Done; i < len(p.Batches); i++ {
		start := time.Now()
		n, err := r.batch(ctx, w, p, i)
		res.Restarted += n
		if r.DryRun {
			if err != nil {
				return res, err
			}
			continue
		}
		e := event.Event{Type: event.Batch, Total: len(p.Batches[i]),
			BatchEnd: event.BatchEnd{BatchResult: event.ResultOf(err, errors.Is(err, context.Canceled))}}
		if err != nil {
			e.Error = err.Error()
			e.Message = fmt.Sprintf("batch %d/%d: %d workloads, stopped", i+1, len(p.Batches), len(p.Batches[i]))
			r.Events.Emit(e)
			return res, err
		}
		e.Message = fmt.Sprintf("batch %d/%d: %d workloads ready on revision %s (%d restarted, %s)",
			i+1, len(p.Batches), len(p.Batches[i]), p.To, n, time.Since(start).Round(100*time.Millisecond))
		if rec != nil {
			rec.Done = i + 1
			if err := saveRecord(ctx, r.Client, r.Namespace, rec, false); err != nil {
				return res, err
			}
		}
		res.Finished++
		r.Events.Emit(e)
	}
	if p.Rollback && !r.DryRun {
		return res, deleteRecord(ctx, r.Client, r.Namespace, false)
	}
	return res, nil
}

// relabelConcurrency bounds the namespaces relabelled at once.
const relabelConcurrency = 8

// relabel points a namespace's istio.io/rev label at the new revision, as FieldManager:
// only while the namespace exists and carries l.From (relabelSkip, judged on a read just
// before), and sent as read (kube.Client.ApplyFieldsAsRead), so a namespace deleted since
// is never created again and one relabelled by someone else meanwhile is judged again.
// One it leaves is reported by a skipped event.
func (r *Runner) relabel(ctx context.Context, l Relabel) error {
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": l.Namespace, "labels": map[string]any{ownership.LabelRevision: ownership.Rev(l.To)}}}}
	for attempt := 1; ; attempt++ {
		live, err := r.Client.Reread(ctx, ns)
		if err != nil {
			return fmt.Errorf("relabelling namespace %s: %w", l.Namespace, err)
		}
		var labels map[string]string
		if live != nil {
			labels = live.GetLabels()
		}
		if why, now := relabelSkip(labels, live != nil, l); why != "" {
			r.Events.Emit(Skip{Object: namespaceRef(l.Namespace), Reason: why, Now: now}.Event())
			return nil
		}
		_, err = r.Client.ApplyFieldsAsRead(ctx, ns, live, FieldManager, r.DryRun)
		if kube.IsChanged(err) && attempt < kube.DeleteAttempts {
			continue // changed since the read: judged again on a new one
		}
		if err != nil {
			return fmt.Errorf("relabelling namespace %s: %w", l.Namespace, err)
		}
		break
	}
	r.Events.Emit(event.Event{Type: event.Applied, Object: namespaceRef(l.Namespace),
		ObjectChange: event.ObjectChange{Action: event.ActionConfigured, Status: fmt.Sprintf("labelled %s=%s (was %s)", ownership.LabelRevision, ownership.Rev(l.To), ownership.Rev(l.From))}})
	return nil
}

// batch restarts batch i's workloads, at most MaxUnavailable at once, each group gated
// before the next; a workload already Ready on the new revision (a resumed batch) is not
// restarted. It returns how many it restarted.
func (r *Runner) batch(ctx context.Context, w *kube.Watcher, p *Plan, i int) (int, error) {
	b := p.Batches[i]
	group := p.MaxUnavailable
	if group <= 0 || group > len(b) {
		group = len(b)
	}
	if w != nil {
		if err := watchBatch(w, b); err != nil {
			return 0, &BatchError{Batch: i + 1, Batches: len(p.Batches), Workload: b[0], Cause: err}
		}
	}
	deadline := time.Now().Add(r.Timeout)
	restarted := 0
	for start := 0; start < len(b); start += group {
		var kept, todo []Workload
		uids := map[Workload]types.UID{}
		for _, wl := range b[start:min(start+group, len(b))] {
			live, err := r.current(ctx, w, wl)
			if err != nil {
				return restarted, &BatchError{Batch: i + 1, Batches: len(p.Batches), Workload: wl, Cause: err}
			}
			if live == nil { // deleted since the plan: nothing to restart, nothing to create
				r.Events.Emit(Skip{Object: wl.String(), Reason: event.SkipDeleted}.Event())
				continue
			}
			kept = append(kept, wl)
			if w != nil {
				if done, err := r.gated(ctx, w, wl, p.To, 0); err != nil {
					return restarted, &BatchError{Batch: i + 1, Batches: len(p.Batches), Workload: wl, Cause: err}
				} else if done.ok {
					continue
				}
			}
			todo = append(todo, wl)
			uids[wl] = live.GetUID()
		}
		gens, err := r.restartAll(ctx, todo, uids)
		restarted += len(gens)
		if err != nil {
			var be *BatchError
			if errors.As(err, &be) {
				be.Batch, be.Batches = i+1, len(p.Batches)
			}
			return restarted, err
		}
		if w == nil {
			continue
		}
		if err := r.gate(ctx, w, kept, p.To, gens, deadline); err != nil {
			var be *BatchError
			if errors.As(err, &be) {
				be.Batch, be.Batches = i+1, len(p.Batches)
			}
			return restarted, err
		}
	}
	return restarted, nil
}

// restartsAtOnce bounds the restart writes in flight: a batch's writes are independent, and
// one after the other they took longer than the rollouts they start.
const restartsAtOnce = 8

// current is wl as it is now (nil: it no longer exists): from the batch's watches, or read
// in a dry run, which watches nothing.
func (r *Runner) current(ctx context.Context, w *kube.Watcher, wl Workload) (*unstructured.Unstructured, error) {
	if w != nil {
		return w.Get(ctx, wl.object(), "")
	}
	return r.Client.Reread(ctx, wl.object())
}

// restartAll restarts ws (each the object with its UID in uids) side by side and returns
// the generation each restart wrote, by workload; the error names the first workload, in
// ws's order, whose restart failed.
func (r *Runner) restartAll(ctx context.Context, ws []Workload, uids map[Workload]types.UID) (map[Workload]int64, error) {
	gens := make([]int64, len(ws))
	errs := make([]error, len(ws))
	var g errgroup.Group
	g.SetLimit(restartsAtOnce)
	for k, wl := range ws {
		g.Go(func() error {
			gens[k], errs[k] = r.restart(ctx, wl, uids[wl])
			return nil
		})
	}
	_ = g.Wait()
	out := map[Workload]int64{}
	var first error
	for k, wl := range ws {
		if errs[k] != nil {
			if first == nil {
				first = &BatchError{Workload: wl, Cause: errs[k]}
			}
			continue
		}
		out[wl] = gens[k]
	}
	return out, first
}

// restart sets the restart annotation on w's pod template: its controller replaces its
// pods, which the injector of the namespace's revision injects. The write goes only to the
// object with uid (kube.Client.ApplyFieldsTo): one deleted since fails the restart and is
// never created again.
func (r *Runner) restart(ctx context.Context, w Workload, uid types.UID) (int64, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": w.Kind,
		"metadata": map[string]any{"name": w.Name, "namespace": w.Namespace},
		"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
			"annotations": map[string]any{RestartAnnotation: now().UTC().Format(time.RFC3339Nano)}}}}}}
	live, err := r.Client.ApplyFieldsTo(ctx, o, uid, FieldManager, r.DryRun)
	if kube.IsChanged(err) {
		return 0, fmt.Errorf("restarting: it was deleted since it was read, and is not created again: %w", err)
	}
	if err != nil {
		return 0, fmt.Errorf("restarting: %w", err)
	}
	if live == nil {
		return 0, nil
	}
	return live.GetGeneration(), nil
}
