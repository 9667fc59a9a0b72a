package main

import (
	"fmt"
	"path"
	"sort"

	"github.com/istioctl-installer/istioctl/pkg/testing/fingerprint"
)

func verdict(accepted bool) string {
	if accepted {
		return "accepted"
	}
	return "rejected"
}

// Compare lists how ours differs from upstream on one case: the verdict, then (both having
// accepted) the inventory and each object's fingerprint; objects whose fingerprints agree
// but whose digests do not are listed field by field when both whole objects are at hand
// (a live run), else by digest.
func Compare(up, ours Result) []string {
	if up.Accepted != ours.Accepted {
		return []string{fmt.Sprintf("verdict: upstream %s, ours %s", verdict(up.Accepted), verdict(ours.Accepted))}
	}
	if !up.Accepted {
		return nil
	}
	strip := func(m map[string]fingerprint.Object) map[string]fingerprint.Object {
		out := make(map[string]fingerprint.Object, len(m))
		for k, o := range m {
			o.Digest = ""
			out[k] = o
		}
		return out
	}
	diffs := fingerprint.Diff(strip(up.Objects), strip(ours.Objects))
	var keys []string
	for k, o := range up.Objects {
		if g, ok := ours.Objects[k]; ok && g.Digest != o.Digest {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if up.Normalised == nil || ours.Normalised == nil {
			diffs = append(diffs, fmt.Sprintf("differs %s: whole object (digest upstream %s, ours %s)", k, up.Objects[k].Digest, ours.Objects[k].Digest))
			continue
		}
		for _, d := range fingerprint.DiffLeaves(up.Normalised[k], ours.Normalised[k]) {
			diffs = append(diffs, fmt.Sprintf("differs %s: %s", k, d))
		}
	}
	return diffs
}

// Outcome is the judgement on one case.
type Outcome struct {
	Case     Case
	Upstream Result
	Ours     Result
	// Diffs are how ours differs from upstream.
	Diffs []string
	// Problem is empty when the case conforms: no difference, or exactly its listed one.
	Problem string
}

// Judge compares the two results and checks them against the case's listed difference.
func Judge(corpus *Corpus, c Case, up, ours Result) Outcome {
	o := Outcome{Case: c, Upstream: up, Ours: ours, Diffs: Compare(up, ours)}
	if c.Difference == "" {
		if len(o.Diffs) > 0 {
			o.Problem = fmt.Sprintf("%d differences from upstream", len(o.Diffs))
		}
		return o
	}
	d := corpus.Differences[c.Difference]
	switch d.Kind {
	case "verdict":
		if verdict(ours.Accepted) != d.Ours || up.Accepted == ours.Accepted {
			o.Problem = fmt.Sprintf("listed as %s (ours %s, upstream not), but upstream %s and ours %s",
				d.ID, d.Ours, verdict(up.Accepted), verdict(ours.Accepted))
		}
	case "render":
		// the objects are Kind/namespace/name patterns (path.Match: * stops at a /)
		allowed := func(k string) bool {
			for _, pattern := range d.Objects {
				if ok, _ := path.Match(pattern, k); ok {
					return true
				}
			}
			return false
		}
		switch {
		case !up.Accepted || !ours.Accepted:
			o.Problem = fmt.Sprintf("listed as %s (a render difference), but upstream %s and ours %s",
				d.ID, verdict(up.Accepted), verdict(ours.Accepted))
		case len(o.Diffs) == 0:
			o.Problem = fmt.Sprintf("listed as %s, but renders as upstream does: drop the listing", d.ID)
		default:
			for k := range union(up.Objects, ours.Objects) {
				if !allowed(k) && differs(up.Objects, ours.Objects, k) {
					o.Problem = fmt.Sprintf("listed as %s, but %s differs too", d.ID, k)
					break
				}
			}
		}
	}
	return o
}

func union(a, b map[string]fingerprint.Object) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func differs(a, b map[string]fingerprint.Object, k string) bool {
	x, okA := a[k]
	y, okB := b[k]
	if okA != okB {
		return true
	}
	return len(fingerprint.Diff(map[string]fingerprint.Object{k: x}, map[string]fingerprint.Object{k: y})) > 0 || x.Digest != y.Digest
}
