package main

import (
	"fmt"
	"path"
	"regexp"
	"sort"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
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

// locatedError is how a refusal of what upstream accepts starts: the file and line, or the
// --set flag as given, then the field's path.
var locatedError = regexp.MustCompile(`^(\S+:\d+|--set [^:]+?): (spec|metadata)[.\[]`)

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
	o := judgeObjects(corpus, c, up, ours)
	if o.Problem == "" {
		o.Problem = judgeDeprecations(up, ours)
	}
	return o
}

// judgeDeprecations compares the deprecation warnings: every one of ours is a row of the
// table (v1alpha1.Deprecations), and for the rows upstream's manifest generate prints, both
// warn of the same settings. (The istiod chart's rows upstream prints at install only.)
func judgeDeprecations(up, ours Result) string {
	if len(ours.Unlisted) > 0 {
		return fmt.Sprintf("a deprecation warning the table does not list: %s", ours.Unlisted[0])
	}
	compared := func(r Result) string {
		var out []string
		for _, s := range r.Deprecations {
			if d, ok := v1alpha1.DeprecationOf(s); ok && d.Generate {
				out = append(out, s)
			}
		}
		return fmt.Sprint(out)
	}
	if u, o := compared(up), compared(ours); u != o {
		return fmt.Sprintf("deprecation warnings differ: upstream %s, ours %s", u, o)
	}
	return ""
}

func judgeObjects(corpus *Corpus, c Case, up, ours Result) Outcome {
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
		switch {
		case verdict(ours.Accepted) != d.Ours || up.Accepted == ours.Accepted:
			o.Problem = fmt.Sprintf("listed as %s (ours %s, upstream not), but upstream %s and ours %s",
				d.ID, d.Ours, verdict(up.Accepted), verdict(ours.Accepted))
		case !ours.Accepted && !locatedError.MatchString(ours.Error):
			o.Problem = fmt.Sprintf("listed as %s, but the refusal names no file:line (or --set flag) and field: %s", d.ID, ours.Error)
		}
	case "render":
		// the objects are patterns of keys, Kind/namespace/name or Kind/name (path.Match: * stops at a /)
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
