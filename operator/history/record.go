package history

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/bounded"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
)

// Outcome says how the run a record describes ended.
type Outcome string

// The outcomes.
const (
	// Succeeded: everything was applied, became ready, and what was no longer rendered was pruned.
	Succeeded Outcome = "succeeded"
	// Failed: the run did not finish; the cluster may hold part of it.
	Failed Outcome = "failed"
	// RolledBack: the run failed, and install --atomic restored the previous successful record.
	RolledBack Outcome = "rolled-back"
	// Removed: the run failed, there was nothing to restore, and install --atomic removed
	// the revision's components again.
	Removed Outcome = "removed"
	// Interrupted: the run stopped without finishing: stopped by Ctrl-C at a safe point (it
	// wrote this record itself), or it stopped holding the cluster lock (killed, or cut off
	// from the cluster: the writer that took its expired lock over wrote this record for it).
	// The cluster may hold part of it. Never a rollback target, and not counted by
	// --history-max.
	Interrupted Outcome = "interrupted"
)

// The actions a record describes.
const (
	ActionInstall  = "install"
	ActionRollback = "rollback"
)

// Limits that keep a record well under the 1 MiB a Secret may hold.
const (
	// MaxObjects is how many object identities a record lists; beyond it the list is cut
	// and ObjectsOmitted counts the rest.
	MaxObjects = 2000
	// MaxPayload bounds the encoded (compressed) record; a larger one is not written
	// (Encode fails with ErrTooLarge).
	MaxPayload = 512 << 10
	// maxDescription bounds the description (an error's first line can be long).
	maxDescription = 200
)

// ErrTooLarge is returned by Encode for a record over MaxPayload.
var ErrTooLarge = errors.New("install record too large")

// ObjectRef is the identity of one rendered object: never its body.
type ObjectRef struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// Ref is the object's reference (the record keeps the version beside it, in these JSON
// fields, as every earlier record does).
func (r ObjectRef) Ref() ref.Ref {
	return ref.Ref{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// Record is one install, upgrade or rollback of a revision.
type Record struct {
	// Number counts the revision's records from 1; each new record takes the next one.
	Number int `json:"number"`
	// Revision is the control plane revision ("default" for none).
	Revision string    `json:"revision"`
	Time     time.Time `json:"time"`
	// ToolVersion is the istioctl version that ran.
	ToolVersion string  `json:"toolVersion"`
	Action      string  `json:"action"`
	Outcome     Outcome `json:"outcome"`
	// RollbackOf is the record a rollback re-installed.
	RollbackOf int `json:"rollbackOf,omitempty"`
	// Description says what happened, for people (an error's first line, the rollback).
	Description string `json:"description,omitempty"`
	Profile     string `json:"profile,omitempty"`
	// Spec is the resolved IstioOperator, as YAML (what profile dump prints).
	Spec string `json:"spec"`
	// Objects are the identities of the rendered objects, in install order.
	Objects []ObjectRef `json:"objects,omitempty"`
	// ObjectsOmitted counts identities cut beyond MaxObjects.
	ObjectsOmitted int `json:"objectsOmitted,omitempty"`
	// Run is the cluster lock holder identity of the run that wrote the record (or, for an
	// interrupted one, of the run it describes): how a writer taking over an expired lock
	// knows whether its holder recorded its run before it died. Empty in records written
	// before the lock existed.
	Run string `json:"run,omitempty"`
	// Digests are the digests an install pinned its images to (install --pin-digests),
	// by image reference: a re-run pins the same ones instead of resolving a tag again.
	Digests map[string]string `json:"digests,omitempty"`
	// Trust is what the record's seal says of it as List read it (seal.go): never
	// stored, always set by List, whatever a stored record claims.
	Trust Trust `json:"trust,omitempty"`

	// namespace and secret are where List read it: a Secret's name may disagree with what
	// its payload says it is (then it is not trusted).
	namespace, secret string
}

// Identities lists the identities of objs, at most MaxObjects, and how many were cut.
func Identities(objs []*unstructured.Unstructured) ([]ObjectRef, int) {
	out := make([]ObjectRef, 0, min(len(objs), MaxObjects))
	for _, o := range objs {
		if len(out) == MaxObjects {
			return out, len(objs) - MaxObjects
		}
		gvk := o.GroupVersionKind()
		out = append(out, ObjectRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()})
	}
	return out, 0
}

// SetDescription sets the description: one line (a multi-line error's lines joined), of
// bounded length.
func (r *Record) SetDescription(s string) {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxDescription {
		cut := maxDescription - 3
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	r.Description = s
}

// Encode returns the record as gzip-compressed JSON; ErrTooLarge when that exceeds MaxPayload.
func Encode(r *Record) ([]byte, error) {
	c := *r
	c.Trust = "" // what List judged, not what was written
	if len(c.Objects) > MaxObjects {
		c.ObjectsOmitted += len(c.Objects) - MaxObjects
		c.Objects = c.Objects[:MaxObjects]
	}
	r = &c
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err := json.NewEncoder(zw).Encode(r); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if buf.Len() > MaxPayload {
		return nil, fmt.Errorf("%w: record %d of revision %s is %d KiB compressed, over the %d KiB limit (the spec is %d KiB)",
			ErrTooLarge, r.Number, r.Revision, buf.Len()>>10, MaxPayload>>10, len(r.Spec)>>10)
	}
	return buf.Bytes(), nil
}

// Decode reads a record Encode wrote. The unzipped JSON is bounded (bounded.MaxUnzipped):
// anyone who may write a Secret in the istio namespace can write a gzip bomb there.
func Decode(b []byte) (*Record, error) {
	data, err := bounded.Gunzip(b, "the record")
	if err != nil {
		return nil, fmt.Errorf("decoding install record: %w", err)
	}
	r := &Record{}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("decoding install record: %w", err)
	}
	return r, nil
}

// Sort orders records by revision, then number.
func Sort(rs []*Record) {
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Revision != rs[j].Revision {
			return rs[i].Revision < rs[j].Revision
		}
		return rs[i].Number < rs[j].Number
	})
}

// Target picks the record a rollback re-installs from one revision's records (sorted by
// number): record n when n > 0; else the previous successful one, that is the last
// succeeded record before the latest one when the latest succeeded (it is what is
// installed now), or the last succeeded record when the latest did not (failed, or
// interrupted: what is installed is then part of it, and the last succeeded record puts
// the cluster back in order). A latest record that is a rollback which did not succeed is
// the exception: its target, when that record is there and succeeded, so that the same
// rollback run again finishes what was stopped rather than undoing it. That pick is made
// among the sealed records when they hold
// one, so that a forged record cannot move it; among all of them otherwise (the caller
// then refuses an unsealed pick, naming it).
func Target(rs []*Record, n int) (*Record, error) {
	if len(rs) == 0 {
		return nil, errors.New("no install records: nothing to roll back to")
	}
	if n == 0 {
		var sealed []*Record
		for _, r := range rs {
			if r.Trust == Sealed {
				sealed = append(sealed, r)
			}
		}
		if len(sealed) > 0 && len(sealed) < len(rs) {
			if r, err := Target(sealed, 0); err == nil {
				return r, nil
			}
		}
	}
	if n > 0 {
		for _, r := range rs {
			if r.Number == n {
				return r, nil
			}
		}
		nums := make([]string, len(rs))
		for i, r := range rs {
			nums[i] = fmt.Sprint(r.Number)
		}
		return nil, fmt.Errorf("no install record %d of revision %s (it has %s)", n, rs[0].Revision, strings.Join(nums, ", "))
	}
	last := len(rs) - 1
	if r := rs[last]; r.Action == ActionRollback && r.Outcome != Succeeded && r.RollbackOf > 0 {
		for _, to := range rs[:last] {
			if to.Number == r.RollbackOf && to.Outcome == Succeeded {
				return to, nil
			}
		}
	}
	if rs[last].Outcome == Succeeded {
		last--
	}
	for i := last; i >= 0; i-- {
		if rs[i].Outcome == Succeeded {
			return rs[i], nil
		}
	}
	return nil, fmt.Errorf("no earlier successful install record of revision %s to roll back to", rs[0].Revision)
}

// LastSucceeded is the newest succeeded record among rs (sorted by number), or nil.
func LastSucceeded(rs []*Record) *Record {
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Outcome == Succeeded {
			return rs[i]
		}
	}
	return nil
}

// Repeats says r only repeats the newest of rs (sorted by number): that one is sealed and
// succeeded with the same spec and tool version, as r did. A run that changed nothing and
// repeats the newest record is not recorded, so an install of an unchanged spec makes no
// write at all; after an untrusted newest record (forged, or from before seals) it writes
// a sealed one.
func Repeats(rs []*Record, r *Record) bool {
	if r.Outcome != Succeeded || len(rs) == 0 {
		return false
	}
	last := rs[len(rs)-1]
	return last.Trust == Sealed && last.Outcome == Succeeded && last.Spec == r.Spec && last.ToolVersion == r.ToolVersion && maps.Equal(last.Digests, r.Digests)
}

// ToTrim lists the numbers to delete so that only the newest keep remain (keep <= 0 keeps
// all). The numbers in skip (interrupted records) do not count: they go only once they are
// older than the oldest record kept, so runs that died cannot push the records a rollback
// needs out of the history.
func ToTrim(numbers []int, keep int, skip map[int]bool) []int {
	if keep <= 0 {
		return nil
	}
	s := append([]int(nil), numbers...)
	sort.Ints(s)
	kept, oldestKept := 0, -1
	for i := len(s) - 1; i >= 0 && kept < keep; i-- {
		if !skip[s[i]] {
			kept++
			oldestKept = s[i]
		}
	}
	if kept < keep {
		return nil
	}
	var out []int
	for _, n := range s {
		if n < oldestKept {
			out = append(out, n)
		}
	}
	return out
}
