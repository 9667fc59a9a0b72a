package fleet

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// aliasFleet is a fleet file of n clusters: the first one's overlay defines a list of lists
// levels deep (9 items each), every other one's overlay aliases the deepest.
func aliasFleet(n, levels int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: fleet.istioctl-installer.github.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: bomb\nspec:\n  meshID: m\n  clusters:\n")
	b.WriteString("  - name: c0\n    context: cluster-1\n    network: n\n    role: primary\n    overlay:\n      unvalidatedValues:\n")
	b.WriteString("        l0: &l0 [x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "        l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 9), ", "))
	}
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  - {name: c%d, context: cluster-1, network: n, role: primary, overlay: {unvalidatedValues: {x: *l%d}}}\n", i, levels-1)
	}
	return []byte(b.String())
}

// TestOneBudgetPerFile: a fleet file of 2,000 clusters whose overlays all alias one node is
// refused once everything decoded from the file, all overlays together, passes
// v1alpha1.MaxNodes, naming the file and the limit: with a node of ~600k (each overlay
// within the limit alone, so one budget per overlay would decode ~1.2G nodes) and with one of
// ~800 (the file within it only by overlay).
func TestOneBudgetPerFile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		levels int
	}{
		{"a node of 600k nodes", 6},
		{"a node of 800 nodes", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := aliasFleet(2000, tc.levels)
			start := time.Now()
			_, err := Decode("bomb.yaml", ".", data, bedContexts)
			took := time.Since(start)
			if err == nil {
				t.Fatal("decoded")
			}
			if want := "the file expands to more than 1048576 YAML nodes, the limit of one input file"; !strings.Contains(err.Error(), "bomb.yaml:") || !strings.Contains(err.Error(), want) {
				t.Errorf("%v\ndoes not name bomb.yaml and %q", err, want)
			}
			// a generous bound: the machine may be busy; the log says what it took
			if took > 5*time.Second {
				t.Errorf("took %v to refuse", took)
			}
			t.Logf("%d KiB, refused in %v: %v", len(data)>>10, took.Round(time.Millisecond), err)
		})
	}
}
