package migrate

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
)

// The progress record lives in the cluster, not on the machine that ran the command: a
// ConfigMap in the istio namespace, written by this package's field manager after each
// step. A run stopped anywhere (a failing batch, Ctrl-C, a lost laptop) is resumed by the
// same command from any machine, and --rollback knows what to undo: where each tag pointed
// and what each namespace's label was before, which nothing else in the cluster still says
// once they moved. One object, read in one request; annotations on the restarted workloads
// could say which were restarted, but not the tags' and labels' previous values.

// RecordName is the progress record's ConfigMap.
const RecordName = "istio-revision-upgrade"

// recordKey is the ConfigMap's key holding the record as JSON.
const recordKey = "progress"

// labelRecord marks the ConfigMap as a revision upgrade's progress record.
const labelRecord = "install.istio.io/revision-upgrade"

// Record is a revision upgrade's progress: what it moved and which batches it finished.
type Record struct {
	From    string       `json:"from"`
	To      string       `json:"to"`
	Tags    []TagMove    `json:"tags,omitempty"`
	Relabel []Relabel    `json:"relabel,omitempty"`
	Batches [][]Workload `json:"batches"`
	// Done counts the batches finished (Ready and injected by To).
	Done int `json:"done"`
	// Deferred are workloads an earlier run recorded and left out of its batches (outside
	// its --namespaces, or no pod of theirs injected by From or To then): a later run checks
	// them again, and a rollback returns those that moved.
	Deferred []Workload `json:"deferred,omitempty"`
}

// workloads are every workload the record names, batched or deferred.
func (r *Record) workloads() []Workload {
	var out []Workload
	for _, b := range r.Batches {
		out = append(out, b...)
	}
	return append(out, r.Deferred...)
}

// recordOf is the record a forward plan starts (or continues) with.
func recordOf(p *Plan, prev *Record) *Record {
	r := &Record{From: p.From, To: p.To, Batches: p.Batches, Done: p.Done, Deferred: p.Deferred}
	if prev != nil && prev.From == p.From && prev.To == p.To {
		r.Tags, r.Relabel = append(r.Tags, prev.Tags...), append(r.Relabel, prev.Relabel...)
	}
	r.Tags = append(r.Tags, p.Tags...)
	r.Relabel = append(r.Relabel, p.Relabel...)
	return r
}

// LoadRecord reads the progress record in namespace (nil, nil: there is none). A record
// whose seal does not hold (history.Seal: written or changed by another account, such as
// istiod's ServiceAccount, which may write ConfigMaps there) is refused, naming it: resume
// and --rollback stop.
func LoadRecord(ctx context.Context, c *kube.Client, namespace string) (*Record, error) {
	live, err := c.Get(ctx, recordObject(namespace, ""))
	if err != nil {
		return nil, fmt.Errorf("reading the revision upgrade's progress record %s/%s: %w", namespace, RecordName, err)
	}
	if live == nil {
		return nil, nil
	}
	data, _, _ := unstructured.NestedString(live.Object, "data", recordKey)
	if t := history.ReadSeals(ctx, c, namespace).Judge(live, []byte(data)); t != history.Sealed {
		return nil, &history.UntrustedError{Object: ref.New("ConfigMap", namespace, RecordName).String(), Trust: t,
			Fix: fmt.Sprintf("Resume and --rollback stop. Check what it says ('kubectl get configmap -n %s %s -o yaml'): if it is your upgrade's, put back by hand the tags and namespace labels it moved, delete it, and run the upgrade again", namespace, RecordName)}
	}
	return decodeRecord(fmt.Sprintf("the revision upgrade's progress record %s/%s", namespace, RecordName), []byte(data))
}

// decodeRecord reads a record's JSON; source names it in errors. A done count outside the
// record's batches is refused: resume and --rollback cut the batches at it.
func decodeRecord(source string, data []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s is not readable (%w): delete it to start over", source, err)
	}
	if r.Done < 0 || r.Done > len(r.Batches) {
		return nil, fmt.Errorf("%s is not readable (it says %d of its %d batches are done): delete it to start over", source, r.Done, len(r.Batches))
	}
	return &r, nil
}

// encodeRecord is what saveRecord writes and decodeRecord reads.
func encodeRecord(r *Record) ([]byte, error) { return json.Marshal(r) }

// saveRecord writes r and seals it (history.Seal), as this package's field manager.
func saveRecord(ctx context.Context, c *kube.Client, namespace string, r *Record, dryRun bool) error {
	data, err := encodeRecord(r)
	if err != nil {
		return err
	}
	live, err := c.ApplyFields(ctx, recordObject(namespace, string(data)), FieldManager, dryRun)
	if err != nil {
		return err
	}
	return history.Seal(ctx, c, live, data, FieldManager, dryRun)
}

// deleteRecord removes the record: nothing is left to resume or roll back. It deletes the
// record as it reads it now (kube.Client.DeleteAsJudged): one re-created meanwhile, or no
// longer labelled as the record, is another run's and stays.
func deleteRecord(ctx context.Context, c *kube.Client, namespace string, dryRun bool) error {
	live, err := c.Get(ctx, recordObject(namespace, ""))
	if err != nil || live == nil {
		return err
	}
	_, err = c.DeleteAsJudged(ctx, live, dryRun, func(now *unstructured.Unstructured) bool {
		l := now.GetLabels()
		return l[labelRecord] == "true" && l[history.LabelManagedBy] == history.ManagedBy
	})
	return err
}

// DeleteRecord removes the record in namespace (an old revision's removal: nothing is left
// to roll back to).
func DeleteRecord(ctx context.Context, c *kube.Client, namespace string, dryRun bool) error {
	return deleteRecord(ctx, c, namespace, dryRun)
}

func recordObject(namespace, data string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": RecordName, "namespace": namespace,
			"labels": map[string]any{history.LabelManagedBy: history.ManagedBy, labelRecord: "true"}},
	}}
	if data != "" {
		o.Object["data"] = map[string]any{recordKey: data}
	}
	return o
}
