package check

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
)

// TestRegistry lists every check with its section, selections and doc (testdata/registry.txt),
// and fails on a duplicate ID, a check without title, section or function, and a doc URL or
// a hint's docs/ link whose file or anchor does not exist.
func TestRegistry(t *testing.T) {
	anchors := map[string]map[string]bool{}
	resolve := func(what, page, anchor string) {
		t.Helper()
		if _, ok := anchors[page]; !ok {
			b, err := os.ReadFile(filepath.Join("..", "..", "docs", page))
			if err != nil {
				t.Errorf("%s: docs/%s: %v", what, page, err)
				anchors[page] = nil
				return
			}
			anchors[page] = docAnchors(string(b))
		}
		if anchors[page] != nil && !anchors[page][anchor] {
			t.Errorf("%s: docs/%s has no anchor #%s", what, page, anchor)
		}
	}
	cites := regexp.MustCompile(`docs/([a-z0-9-]+\.md)#([a-z0-9-]+)`)
	var b strings.Builder
	seen := map[string]bool{}
	for _, c := range registry {
		if seen[c.ID] {
			t.Errorf("check %q is declared twice", c.ID)
		}
		seen[c.ID] = true
		if c.Title == "" || c.Section == "" || c.In == 0 || (c.Run == nil) == (c.Cross == nil) {
			t.Errorf("check %q: without title, section, selection, or one function", c.ID)
		}
		page, anchor, ok := strings.Cut(strings.TrimPrefix(c.Doc, DocsURL), "#")
		if !strings.HasPrefix(c.Doc, DocsURL) || !ok || strings.Contains(page, "/") {
			t.Errorf("check %q: doc %q is not %s<page>#<anchor>", c.ID, c.Doc, DocsURL)
		} else {
			resolve("check "+c.ID, page, anchor)
		}
		if regexp.MustCompile(`(^|[^/])docs/`).MatchString(c.Hint) {
			t.Errorf("check %q: hint %q names a docs/ path, not a link (DocsURL)", c.ID, c.Hint)
		}
		for _, m := range cites.FindAllStringSubmatch(c.Hint, -1) {
			resolve("check "+c.ID+"'s hint", m[1], m[2])
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", c.ID, c.Section, selections(c.In), c.Doc)
	}
	golden.Check(t, "testdata/registry.txt", []byte(b.String()))
}

// TestSelections: each selection is the registry's checks that name it, in its order.
func TestSelections(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []Check
		// first and last are the selection's first and last IDs.
		first, last string
		n           int
	}{
		{"precheck", Precheck(), "kubernetes-version", "prometheus", 25},
		{"verify", Verify(), "object-health", "prometheus", 13},
		{"relied", External(), "relied-control-plane", "prometheus", 8},
		{"admission", Admission(), "admission", "references", 2},
		{"links", Links(), "link-namespace", "link-istiod", 11},
		{"cross-cluster", CrossCluster(), "mesh-read", "mesh-link-server", 8},
		{"hop", Select(GateHop), "upgrade-hop", "upgrade-hop", 1},
		{"ownership", Select(GateOwnership), "ownership", "ownership", 1},
	} {
		if len(tc.got) != tc.n || tc.got[0].ID != tc.first || tc.got[len(tc.got)-1].ID != tc.last {
			t.Errorf("%s: %d checks from %s to %s, want %d from %s to %s", tc.name,
				len(tc.got), tc.got[0].ID, tc.got[len(tc.got)-1].ID, tc.n, tc.first, tc.last)
		}
	}
}

var selectionNames = []struct {
	s    Selection
	name string
}{
	{InPrecheck, "precheck"}, {InVerify, "verify-install"}, {InLinks, "links"}, {InCrossCluster, "cross-cluster"},
	{InFleetLinks, "fleet-links"}, {GateRelied, "gate:relied"}, {GateHop, "gate:hop"}, {GateAdmission, "gate:admission"},
	{GateOwnership, "gate:ownership"},
}

func selections(in Selection) string {
	var names []string
	for _, s := range selectionNames {
		if in&s.s != 0 {
			names = append(names, s.name)
		}
	}
	return strings.Join(names, ",")
}

var (
	explicitAnchor = regexp.MustCompile(`<a id="([^"]+)"`)
	heading        = regexp.MustCompile(`(?m)^#+ (.*)$`)
	notSlug        = regexp.MustCompile(`[^a-z0-9 _-]`)
)

// docAnchors are a markdown page's anchors: its <a id> and its headings as GitHub names them.
func docAnchors(page string) map[string]bool {
	out := map[string]bool{}
	for _, m := range explicitAnchor.FindAllStringSubmatch(page, -1) {
		out[m[1]] = true
	}
	for _, m := range heading.FindAllStringSubmatch(page, -1) {
		out[strings.ReplaceAll(notSlug.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")] = true
	}
	return out
}

// TestHopGate: the hop gate judges the one move it is given by the skew rules, blocking a
// refused hop unless forced.
func TestHopGate(t *testing.T) {
	far := &Hop{Object: "Deployment/istio-system/istiod", From: "1.29.4", InPlace: true}
	for _, tc := range []struct {
		name    string
		hop     *Hop
		set     Override
		blocked bool
	}{
		{"one minor in place", &Hop{Object: "Deployment/istio-system/istiod", From: "1.30.2", InPlace: true}, 0, false},
		{"two minors in place", far, 0, true},
		{"two minors in place, forced", far, Force, false},
		{"two minors in place, taking ownership", far, TakeOwnership, true},
		{"two minors by revision", &Hop{Object: "Deployment/istio-system/istiod-old", From: "1.29.4"}, 0, false},
		{"a dev build", &Hop{Object: "(Cluster)", From: "", InPlace: true}, 0, false},
	} {
		kept, err := Gate(t.Context(), GateHop, &Env{Version: "1.31.0", Hop: tc.hop}, tc.set)
		var b *Blocked
		if got := errors.As(err, &b); got != tc.blocked {
			t.Errorf("%s: blocked %v (%v), want %v", tc.name, got, err, tc.blocked)
			continue
		}
		if tc.blocked {
			r := b.Results[0]
			if r.Check != "upgrade-hop" || r.Object != tc.hop.Object || !strings.Contains(r.Message, "rule in-place-hop") ||
				!strings.Contains(r.Hint, "docs/upgrade.md#upgrade-hop") || !strings.HasPrefix(err.Error(), b.Headline()+":\n") {
				t.Errorf("%s: %+v, %q", tc.name, r, err)
			}
		}
		if tc.set == Force && (len(kept) != 1 || kept[0].Passed) {
			t.Errorf("%s: kept %+v, want the refused hop", tc.name, kept)
		}
	}
}

// TestOwnershipGate: the ownership gate blocks on every object another manager owns, naming
// it and its manager, unless the run takes ownership; --force never lifts it.
func TestOwnershipGate(t *testing.T) {
	foreign := []ownership.Foreign{
		{Object: "CustomResourceDefinition/gateways.networking.istio.io", Manager: "field manager helm"},
		{Object: "Deployment/istio-system/istiod", Manager: "Helm release istio-system/istiod", Helm: true},
	}
	for _, tc := range []struct {
		name    string
		foreign []ownership.Foreign
		set     Override
		blocked bool
	}{
		{"foreign objects", foreign, 0, true},
		{"none", nil, 0, false},
		{"taking ownership", foreign, TakeOwnership, false},
		{"forced", foreign, Force, true},
		{"forced and taking ownership", foreign, Force | TakeOwnership, false},
	} {
		kept, err := Gate(t.Context(), GateOwnership, &Env{Foreign: tc.foreign}, tc.set)
		var b *Blocked
		if got := errors.As(err, &b); got != tc.blocked {
			t.Errorf("%s: blocked %v (%v), want %v", tc.name, got, err, tc.blocked)
			continue
		}
		if tc.blocked {
			want := "objects this install would apply exist and were not installed by istioctl:\n" +
				"  CustomResourceDefinition/gateways.networking.istio.io: managed by field manager helm\n" +
				"  Deployment/istio-system/istiod: managed by Helm release istio-system/istiod\n" +
				"Nothing was written. Fix them, or adopt them with --take-ownership"
			if err.Error() != want || b.LiftedBy() != TakeOwnership || len(b.Results) != 2 ||
				b.Results[0].Check != "ownership" || !strings.Contains(b.Results[0].Hint, "docs/external-components.md#ownership") {
				t.Errorf("%s: %+v\n%s", tc.name, b.Results, err)
			}
			continue
		}
		// Lifted, the objects are kept for the run to announce as adopted.
		if len(kept) != len(tc.foreign) {
			t.Errorf("%s: kept %+v, want the %d foreign objects", tc.name, kept, len(tc.foreign))
		}
	}
}

// TestGatesDeclared: every gate has checks, a headline and the one override that lifts it.
func TestGatesDeclared(t *testing.T) {
	for _, g := range []Selection{GateRelied, GateHop, GateAdmission, GateOwnership} {
		b := &Blocked{Gate: g}
		if len(Select(g)) == 0 || b.Headline() == "" || b.LiftedBy().Flag() == "" || b.LiftedBy().Does() == "" {
			t.Errorf("gate %s: %d checks, headline %q, lifted by %q (%q)", selections(g), len(Select(g)), b.Headline(), b.LiftedBy().Flag(), b.LiftedBy().Does())
		}
	}
}
