package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/istioctl-installer/istioctl/pkg/testing/fingerprint"
)

// Recorded is what upstream did with every case, as make conformance last saw it: the
// fast test compares ours with it without an upstream binary. Objects are pooled by their
// fingerprint's digest, since most cases render most objects alike.
type Recorded struct {
	Upstream string                        `json:"upstream"`
	Cases    map[string]RecordedCase       `json:"cases"`
	Objects  map[string]fingerprint.Object `json:"objects"`
}

// RecordedCase is one case's upstream result.
type RecordedCase struct {
	Verdict string `json:"verdict"`
	Error   string `json:"error,omitempty"`
	// Objects maps each rendered object (fingerprint.Key) to its fingerprint in the pool.
	Objects map[string]string `json:"objects,omitempty"`
	// Deprecations are the settings upstream warned are deprecated.
	Deprecations []string `json:"deprecations,omitempty"`
}

// Record pools the upstream results of the cases.
func Record(version string, cases []Case, results map[string]Result) *Recorded {
	r := &Recorded{Upstream: version, Cases: map[string]RecordedCase{}, Objects: map[string]fingerprint.Object{}}
	for _, c := range cases {
		res := results[c.ID]
		rc := RecordedCase{Verdict: verdict(res.Accepted), Error: res.Error, Deprecations: res.Deprecations}
		if res.Accepted {
			rc.Objects = map[string]string{}
			for k, o := range res.Objects {
				id := fingerprint.Digest(o)
				r.Objects[id] = o
				rc.Objects[k] = id
			}
		}
		r.Cases[c.ID] = rc
	}
	return r
}

// Result is the recorded upstream result of one case.
func (r *Recorded) Result(id string) (Result, error) {
	rc, ok := r.Cases[id]
	if !ok {
		return Result{}, fmt.Errorf("%s: no recorded upstream result: run make conformance to record it", id)
	}
	res := Result{Accepted: rc.Verdict == "accepted", Error: rc.Error, Deprecations: rc.Deprecations}
	if res.Accepted {
		res.Objects = map[string]fingerprint.Object{}
		for k, id := range rc.Objects {
			o, ok := r.Objects[id]
			if !ok {
				return Result{}, fmt.Errorf("recorded object %s (%s) missing from the pool", k, id)
			}
			res.Objects[k] = o
		}
	}
	return res, nil
}

// Save writes the record as indented JSON, objects and cases in key order.
func (r *Recorded) Save(path string) error {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// LoadRecorded reads a record written by Save.
func LoadRecorded(path string) (*Recorded, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &Recorded{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
