package skew_test

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/objdiff"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/skew"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
	"github.com/istioctl-installer/istioctl/pkg/testing/rendertest"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

func TestChanges(t *testing.T) {
	got, err := skew.Changes("1.29.4", "1.31.0")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range got {
		lines = append(lines, c.String())
	}
	want := []string{
		`pilot.env.PILOT_SIDECAR_PICK_BEST_SERVICE_NAMESPACE changed in 1.30 (compatibilityVersion: 1.29 keeps "false")`,
		`pilot.env.PILOT_AUTO_SEND_UNHEALTHY_ENDPOINTS changed in 1.31 (compatibilityVersion: 1.30 keeps "false")`,
		`pilot.env.PILOT_ENABLE_STRICT_GATEWAY_MERGING changed in 1.31 (compatibilityVersion: 1.30 keeps "false")`,
		`pilot.env.PILOT_SPAWN_UPSTREAM_SPAN_FOR_GATEWAY changed in 1.31 (compatibilityVersion: 1.30 keeps "false")`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("Changes(1.29.4, 1.31.0):\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if got, err := skew.Changes("1.31.0", "1.31.2"); err != nil || len(got) != 0 {
		t.Errorf("Changes of a patch: %v, %v; want none", got, err)
	}
	if _, err := skew.Changes("1.22.0", "1.31.0"); !errors.Is(err, skew.ErrNoCompatibility) {
		t.Errorf("Changes from 1.22: %v, want ErrNoCompatibility", err)
	}
}

// TestOfferedRendersOldBehaviour: the compatibilityVersion offered for each change an
// upgrade from 1.29 crosses renders that value as it was before the change; the golden
// holds what each offered compatibilityVersion changes of the default profile's install.
func TestOfferedRendersOldBehaviour(t *testing.T) {
	changes, err := skew.Changes("1.29.4", version.Version)
	if err != nil {
		t.Fatal(err)
	}
	now := renderWith(t)
	byCompat := map[string][]skew.Change{}
	var offered []string
	for _, c := range changes {
		if byCompat[c.CompatibilityVersion] == nil {
			offered = append(offered, c.CompatibilityVersion)
		}
		byCompat[c.CompatibilityVersion] = append(byCompat[c.CompatibilityVersion], c)
	}
	var out []string
	for _, cv := range offered {
		old := renderWith(t, "compatibilityVersion="+cv)
		var keys []string
		for k := range old {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var diffs []string
		for _, key := range keys {
			n := now[key]
			if n == nil {
				t.Fatalf("%s rendered only with compatibilityVersion %s", key, cv)
			}
			d, err := objdiff.Diff(n, old[key])
			if err != nil {
				t.Fatal(err)
			}
			if d != "" {
				diffs = append(diffs, "--- "+key+"\n"+d)
			}
		}
		all := strings.Join(diffs, "\n")
		for _, c := range byCompat[cv] {
			name := c.Path[strings.LastIndex(c.Path, ".")+1:]
			if !regexp.MustCompile(`(?m)^\+.*` + regexp.QuoteMeta(name) + `[\s\S]*?^\+\s+value: "?` + regexp.QuoteMeta(fmt.Sprint(c.Old)) + `"?$`).MatchString(all) {
				t.Errorf("%s: compatibilityVersion %s does not render it so:\n%s", c, cv, all)
			}
		}
		out = append(out, "=== compatibilityVersion "+cv+"\n"+all)
	}
	golden.Check(t, "testdata/offered-from-1.29.diff", []byte(strings.Join(out, "\n")))
}

func renderWith(t *testing.T, sets ...string) map[string]*unstructured.Unstructured {
	t.Helper()
	_, ms := rendertest.Sets(t, sets...)
	out := map[string]*unstructured.Unstructured{}
	for _, o := range render.All(ms) {
		out[ref.Of(o).String()] = o
	}
	return out
}
