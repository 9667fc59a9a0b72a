package v1alpha1

import (
	"io/fs"
	"regexp"
	"testing"

	"github.com/istioctl-installer/istioctl/manifests"
)

// TestDeprecationTable keeps the one table complete: every row has a replacement and says
// where this tool warns; the istiod chart's NOTES.txt moves exactly the settings the table
// lists for it, with the same replacements; every field the API marks deprecated has a row.
func TestDeprecationTable(t *testing.T) {
	rows := map[string]Deprecation{}
	for _, d := range Deprecations() {
		if d.Replacement == "" || d.Ours == "" || d.Match == "" {
			t.Errorf("%s: a row needs a replacement, where we warn and the text to match", d.Setting)
		}
		if _, dup := rows[d.Setting]; dup {
			t.Errorf("%s listed twice", d.Setting)
		}
		rows[d.Setting] = d
	}
	b, err := fs.ReadFile(manifests.Charts, "charts/istio-control/istio-discovery/templates/NOTES.txt")
	if err != nil {
		t.Fatal(err)
	}
	pairs := regexp.MustCompile(`(?m)^\s+"([^"]+)" "([^"]+)"`).FindAllStringSubmatch(string(b), -1)
	if len(pairs) != len(chartDeprecations) {
		t.Errorf("NOTES.txt moves %d settings, the table lists %d", len(pairs), len(chartDeprecations))
	}
	for _, p := range pairs {
		d, ok := rows["values."+p[1]]
		if !ok || d.Replacement != p[2] {
			t.Errorf("NOTES.txt: %s -> %s; the table: %+v", p[1], p[2], d)
		}
	}
	fields := DeprecatedFields()
	if len(fields) < 40 {
		t.Errorf("only %d deprecated fields found: %v", len(fields), fields)
	}
	for _, f := range fields {
		if _, ok := rows[f]; !ok {
			t.Errorf("deprecated field %s has no row", f)
		}
	}
	if got := DeprecationsIn(`'ISTIO_META_DNS_AUTO_ALLOCATE' is deprecated; review ...`); len(got) != 1 {
		t.Errorf("upstream's mesh warning matches %v", got)
	}
}
